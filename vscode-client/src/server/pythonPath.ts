import * as os from 'node:os';
import * as vscode from 'vscode';
import { pythonSetting } from './settingsTrust';

export interface PythonChoice {
  command: string;
  source: 'setting' | 'python-extension' | 'default' | 'managed';
  /** Why a shiro.pythonPath was not used (Restricted Mode), for the log. */
  refused?: string;
}

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

/**
 * The interpreter for the server. In Restricted Mode the workspace has no say: its shiro.pythonPath is ignored,
 * and so is the Python extension's choice (it may be the repository's own `.venv`); the user's setting (unless it
 * points into the workspace), else `python3` (or the self-installed environment) is used.
 */
export async function resolvePython(trusted: boolean = vscode.workspace.isTrusted): Promise<PythonChoice> {
  const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
  const folders = (vscode.workspace.workspaceFolders ?? []).map(f => f.uri.fsPath);
  const cfg = vscode.workspace.getConfiguration('shiro', resource);
  const { setting, refused } = pythonSetting(cfg, trusted, folders, raw =>
    expandPath(raw, resource?.fsPath, os.homedir()),
  );
  const withReason = (choice: PythonChoice): PythonChoice => (refused ? { ...choice, refused } : choice);
  if (setting) return withReason(choosePython(setting.value, undefined));
  if (!trusted) return withReason(choosePython(undefined, undefined));
  return withReason(choosePython(undefined, await pythonFromExtension(resource)));
}
