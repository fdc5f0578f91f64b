// Which workspace folder a new session is bound to (multi-root workspaces). Pure: the extension passes
// in the window's folders and the active editor's folder, and shows the picker when this says so.

export interface FolderInfo {
  name: string;
  fsPath: string;
}

export type RootChoice =
  /** Send no root: one folder (or none) behaves as it always has; or the session already has one. */
  | { kind: 'none' }
  /** The active editor's folder. */
  | { kind: 'folder'; root: string }
  /** Several folders and no editor in one of them: ask. */
  | { kind: 'pick'; items: RootPickItem[] };

export interface RootPickItem {
  label: string;
  description: string;
  root: string;
}

/**
 * `sessionBound`: the live session has messages, so its root is fixed (the server ignores a root then;
 * asking would only interrupt). `activeFolder`: the folder of the active editor's file, if it has one.
 */
export function chooseRoot(
  folders: readonly FolderInfo[],
  activeFolder: string | undefined,
  sessionBound: boolean,
): RootChoice {
  if (folders.length < 2 || sessionBound) return { kind: 'none' };
  if (activeFolder !== undefined && folders.some(f => f.fsPath === activeFolder))
    return { kind: 'folder', root: activeFolder };
  return { kind: 'pick', items: folders.map(f => ({ label: f.name, description: f.fsPath, root: f.fsPath })) };
}

export const ROOT_PICK_TITLE = 'Shiro: which workspace folder is this session for?';
