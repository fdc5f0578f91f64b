import * as os from 'node:os';
import * as vscode from 'vscode';

export interface PythonChoice { command: string; source: 'setting' | 'python-extension' | 'default' | 'managed' }

/** `${workspaceFolder}` and a leading `~` in the setting, as VS Code users expect from path settings. */
export function expandPath(value: string, workspaceFolder: string | undefined, home: string): string {
  let out = value.trim();
  if (workspaceFolder) out = out.replace(/\$\{workspaceFolder\}/g, workspaceFolder);
  if (out === '~' || out.startsWith('~/')) out = home + out.slice(1);
  return out;
}

/** First non-empty of: the shiro.pythonPath setting, the Python extension's choice, `python3`. */
export function choosePython(setting: string | undefined, fromExtension: string | undefined): PythonChoice {
  if (setting && setting.trim()) return { command: setting.trim(), source: 'setting' };
  if (fromExtension && fromExtension.trim()) return { command: fromExtension.trim(), source: 'python-extension' };
  return { command: 'python3', source: 'default' };
}

interface PythonExtensionApi {
  environments?: { getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } };
  settings?: { getExecutionDetails(resource?: vscode.Uri): { execCommand?: string[] } };
}

/** The interpreter the Python extension picked for this workspace, if it is installed. */
export async function pythonFromExtension(resource: vscode.Uri | undefined): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension<PythonExtensionApi>('ms-python.python');
  if (!ext) return undefined;
  try {
    const api = ext.isActive ? ext.exports : await ext.activate();
    const fromEnv = api.environments?.getActiveEnvironmentPath(resource)?.path;
    if (fromEnv) return fromEnv;
    return api.settings?.getExecutionDetails(resource)?.execCommand?.[0];
  } catch {
    return undefined;
  }
}

export async function resolvePython(): Promise<PythonChoice> {
  const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
  const raw = vscode.workspace.getConfiguration('shiro', resource).get<string>('pythonPath');
  const setting = raw ? expandPath(raw, resource?.fsPath, os.homedir()) : undefined;
  if (setting) return choosePython(setting, undefined);
  return choosePython(undefined, await pythonFromExtension(resource));
}
