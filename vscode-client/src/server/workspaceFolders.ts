import * as vscode from 'vscode';

/** How long a window with a workspace file but no folders yet waits for VS Code to read that file. */
export const FOLDERS_WAIT_MS = 15_000;

/**
 * The window's folders, once VS Code knows them. A workspace file (`.code-workspace`) on a remote machine
 * (Remote-SSH, WSL, code-server) is read after the window opens: until then `workspaceFolders` is empty, and a
 * decision taken on it (the server's folders, a multi-root session's folder picker) would be one for a window
 * with no folders. A workspace file that really lists none is waited for `maxWaitMs` at most.
 */
export async function knownFolders(maxWaitMs = FOLDERS_WAIT_MS): Promise<readonly vscode.WorkspaceFolder[]> {
  if (!foldersPending()) return vscode.workspace.workspaceFolders ?? [];
  await new Promise<void>(resolve => {
    const done = (): void => {
      clearTimeout(timer);
      sub.dispose();
      resolve();
    };
    const timer = setTimeout(done, maxWaitMs);
    const sub = vscode.workspace.onDidChangeWorkspaceFolders(done);
  });
  return vscode.workspace.workspaceFolders ?? [];
}

/** Whether the window has a workspace file whose folders VS Code has not read yet. */
export function foldersPending(): boolean {
  return !vscode.workspace.workspaceFolders?.length && vscode.workspace.workspaceFile !== undefined;
}
