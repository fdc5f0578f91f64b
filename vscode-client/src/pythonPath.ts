import * as vscode from 'vscode';

export interface PythonChoice { command: string; source: 'setting' | 'python-extension' | 'default' }

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
  const setting = vscode.workspace.getConfiguration('shiro', resource).get<string>('pythonPath');
  if (setting && setting.trim()) return choosePython(setting, undefined);
  return choosePython(undefined, await pythonFromExtension(resource));
}
