import * as vscode from 'vscode';

export const SHOW_LOG = 'Show log';
export const OPEN_SETTINGS = 'Set Python path';

export function serverFailureMessage(python: string, reason: string): string {
  const why = reason.trim().replace(/\s+/g, ' ') || 'it exited';
  return (
    `Shiro: the language server failed to start (${python} -m shiro_lsp): ${why}. ` +
    'Install shiro-lsp into that interpreter (`make run` sets up .venv) or set shiro.pythonPath, ' +
    'then run "Shiro: Restart server".'
  );
}

export function errorReason(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : 'unknown error';
}

/** Show an actionable error; "Show log" opens the output channel with the server's stderr. */
export async function reportServerFailure(
  python: string,
  error: unknown,
  log: { show(preserveFocus?: boolean): void },
): Promise<string | undefined> {
  const choice = await vscode.window.showErrorMessage(
    serverFailureMessage(python, errorReason(error)),
    SHOW_LOG,
    OPEN_SETTINGS,
  );
  if (choice === SHOW_LOG) log.show(true);
  else if (choice === OPEN_SETTINGS)
    await vscode.commands.executeCommand('workbench.action.openSettings', 'shiro.pythonPath');
  return choice;
}

export async function reportRestart(count: number, log: { show(preserveFocus?: boolean): void }): Promise<void> {
  const choice = await vscode.window.showWarningMessage(
    `Shiro: the language server stopped unexpectedly and was restarted (${count} of 4). A running answer was lost.`,
    SHOW_LOG,
  );
  if (choice === SHOW_LOG) log.show(true);
}

export const COPY_COMMAND = 'Copy command';

export function envFailureMessage(reason: string, command: string): string {
  return (
    `Shiro: could not set up its Python environment: ${reason.trim() || 'unknown error'}. ` +
    `Run this in a terminal, then "Shiro: Restart server": ${command} ` +
    '(or point shiro.pythonPath at an interpreter that has shiro-lsp installed).'
  );
}

/** The private environment could not be built (offline, no Python 3.11+ ...): say why and give the command. */
export async function reportEnvFailure(
  reason: string,
  command: string,
  log: { show(preserveFocus?: boolean): void },
): Promise<string | undefined> {
  const choice = await vscode.window.showErrorMessage(
    envFailureMessage(reason, command),
    COPY_COMMAND,
    SHOW_LOG,
    OPEN_SETTINGS,
  );
  if (choice === COPY_COMMAND) await vscode.env.clipboard.writeText(command);
  else if (choice === SHOW_LOG) log.show(true);
  else if (choice === OPEN_SETTINGS)
    await vscode.commands.executeCommand('workbench.action.openSettings', 'shiro.pythonPath');
  return choice;
}
