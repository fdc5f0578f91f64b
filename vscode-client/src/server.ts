// Starts `python -m shiro_lsp` through vscode-languageclient, restarts it if it dies (telling the user),
// and reports a start failure with an actionable error ("Show log" opens the server's stderr).
import { execFile } from 'node:child_process';
import * as vscode from 'vscode';
import {
  CloseAction, DidChangeConfigurationNotification, ErrorAction, LanguageClient, State,
} from 'vscode-languageclient/node';
import type { CloseHandlerResult, ErrorHandlerResult, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';
import { errorReason, reportEnvFailure, reportRestart, reportServerFailure } from './errors';
import { initializationOptions } from './options';
import type { InitializationOptions } from './protocol';
import { resolvePython } from './pythonPath';
import type { PythonChoice } from './pythonPath';
import { bundledWheel, ensureServerEnv, EnvSetupError } from './serverEnv';
import { RestartPolicy } from './restartPolicy';

export const API_KEY_SECRET = 'shiro.apiKey';

/** Why `python -m shiro_lsp` cannot start, in the interpreter's own words (its last stderr line), if it can't. */
export function diagnose(python: string, cwd: string | undefined): Promise<string | undefined> {
  return new Promise(resolve => {
    execFile(python, ['-c', 'import shiro_lsp.__main__'], { cwd, timeout: 15_000 }, (error, _stdout, stderr) => {
      if (!error) { resolve(undefined); return; }
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') { resolve(`there is no interpreter at ${python}`); return; }
      const lines = String(stderr).trim().split('\n').filter(Boolean);
      resolve(lines.at(-1) ?? (error as NodeJS.ErrnoException).code ?? error.message);
    });
  });
}

/** Start failures are reported by us with actions; the library's own bare toast would only duplicate it. */
class ShiroLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown, showNotification?: boolean | 'force'): void {
    const ours = /couldn't create connection to server/.test(message);
    super.error(message, data, ours ? false : showNotification);
  }
}

export type Wiring = (client: LanguageClient) => vscode.Disposable[];

export class ShiroServer implements vscode.Disposable {
  readonly log: vscode.LogOutputChannel;
  private client: LanguageClient | undefined;
  private wiring: vscode.Disposable[] = [];
  private readonly restarts = new RestartPolicy(4, 3 * 60_000);
  private running = false;
  private starting: Promise<void> | undefined;
  private restarting = false;
  private python = 'python3';
  private choice: PythonChoice | undefined;
  /** The last errors shown or logged, for "Shiro: Diagnose" (newest last). */
  readonly recentErrors: string[] = [];
  private readonly stateEmitter = new vscode.EventEmitter<'starting' | 'running' | 'stopped' | 'failed'>();
  readonly onDidChangeState = this.stateEmitter.event;

  constructor(private readonly context: vscode.ExtensionContext, private readonly wire: Wiring) {
    this.log = vscode.window.createOutputChannel('Shiro', { log: true });
  }

  recordError(message: string): void {
    this.recentErrors.push(`${new Date().toISOString()} ${message}`);
    if (this.recentErrors.length > 20) this.recentErrors.splice(0, this.recentErrors.length - 20);
  }

  private logError(message: string): void {
    this.log.error(message);
    this.recordError(message);
  }

  /** Which interpreter runs the server, and why that one. */
  get interpreter(): PythonChoice | undefined { return this.choice; }

  /** The server's name and version from its initialize answer. */
  get serverInfo(): { name: string; version?: string } | undefined { return this.client?.initializeResult?.serverInfo; }

  /** The settings' interpreter, else a packaged server's private environment (built on first start), else the default. */
  private async interpreterChoice(): Promise<PythonChoice | undefined> {
    const choice = await resolvePython();
    if (choice.source === 'setting') return choice;
    const wheel = await bundledWheel(this.context.extensionPath);
    if (!wheel) return choice;
    try {
      const command = await ensureServerEnv({
        storageDir: this.context.globalStorageUri.fsPath,
        extensionVersion: String((this.context.extension.packageJSON as { version?: string }).version ?? '0'),
        wheel, basePython: choice.command, log: this.log,
      });
      return { command, source: 'managed' };
    } catch (error) {
      const command = error instanceof EnvSetupError ? error.command : '';
      this.logError(`Environment setup failed: ${errorReason(error)}${command ? `\nRun by hand: ${command}` : ''}`);
      this.stateEmitter.fire('failed');
      void reportEnvFailure(errorReason(error), command, this.log);
      return undefined;
    }
  }

  get isRunning(): boolean { return this.running && this.client?.state === State.Running; }

  async sendRequest<R>(method: string, params: object, token?: vscode.CancellationToken): Promise<R> {
    await this.untilReady();
    if (!this.client || !this.isRunning) {
      throw new Error('Shiro\'s language server is not running. Run "Shiro: Restart server" or "Shiro: Show log".');
    }
    return token ? this.client.sendRequest<R>(method, params, token) : this.client.sendRequest<R>(method, params);
  }

  /** A request sent while the server starts, or restarts after a crash, waits for it (up to 30 s). */
  private async untilReady(): Promise<void> {
    if (this.isRunning || !this.client) return;
    if (this.starting) await this.starting.catch(() => undefined);
    if (this.isRunning || !(this.restarting || this.client.state === State.Starting)) return;
    await new Promise<void>(resolve => {
      const done = (): void => { clearTimeout(timer); sub.dispose(); resolve(); };
      const timer = setTimeout(done, 30_000);
      const sub = this.onDidChangeState(state => { if (state !== 'starting') done(); });
    });
  }

  async sendNotification(method: string, params: object): Promise<void> {
    if (this.client && this.isRunning) await this.client.sendNotification(method, params);
  }

  private async options(): Promise<InitializationOptions> {
    const cfg = vscode.workspace.getConfiguration('shiro');
    const apiKey = await this.context.secrets.get(API_KEY_SECRET);
    return initializationOptions(cfg, apiKey, vscode.workspace.isTrusted);
  }

  async start(): Promise<void> {
    await this.stop();
    const choice = await this.interpreterChoice();
    if (!choice) return;
    this.choice = choice;
    this.python = choice.command;
    this.log.info(`Starting ${this.python} -m shiro_lsp (interpreter from ${choice.source})`);
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const serverOptions: ServerOptions = { command: this.python, args: ['-m', 'shiro_lsp'], options: { cwd } };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      initializationOptions: await this.options(),
      outputChannel: this.log,
      revealOutputChannelOn: 4, // RevealOutputChannelOn.Never: we show our own actionable messages
      errorHandler: {
        error: (_e, _m, count): ErrorHandlerResult =>
          ({ action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown, handled: true }),
        closed: () => this.onClosed(),
      },
      initializationFailedHandler: () => false,
    };
    const client = new ShiroLanguageClient('shiro', 'Shiro', serverOptions, clientOptions);
    this.client = client;
    this.wiring = this.wire(client);
    this.wiring.push(client.onDidChangeState(e => {
      if (e.newState === State.Running) { this.running = true; this.restarting = false; this.stateEmitter.fire('running'); }
      else if (e.newState === State.Starting) this.stateEmitter.fire('starting');
      else if (e.newState === State.Stopped && this.client === client) this.stateEmitter.fire('stopped');
    }));
    this.stateEmitter.fire('starting');
    const started = client.start();
    this.starting = started;
    try {
      await started;
    } catch (error) {
      if (this.client !== client) return;
      this.running = false;
      this.stateEmitter.fire('failed');
      this.logError(`Start failed: ${error instanceof Error ? error.message : String(error)}`);
      const reason = await diagnose(this.python, cwd);
      if (reason) this.logError(`${this.python} -c "import shiro_lsp.__main__": ${reason}`);
      void reportServerFailure(this.python, reason ?? error, this.log);
    }
  }

  private onClosed(): CloseHandlerResult {
    if (!this.running) {
      // Died before it ever answered initialize: start() rejects and reports it; restarting would loop.
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    const restart = this.restarts.crashed(Date.now());
    if (restart !== undefined) {
      this.restarting = true;
      this.log.warn(`Server stopped; restart ${restart} of 4`);
      void reportRestart(restart, this.log);
      return { action: CloseAction.Restart, handled: true };
    }
    this.running = false;
    this.restarting = false;
    this.stateEmitter.fire('failed');
    void reportServerFailure(this.python, 'it stopped 5 times in 3 minutes and will not be restarted automatically', this.log);
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  /** Send the current settings (API key included, never logged) as workspace/didChangeConfiguration. */
  async pushConfiguration(): Promise<void> {
    if (!this.client || !this.isRunning) return;
    await this.client.sendNotification(DidChangeConfigurationNotification.type, { settings: { shiro: await this.options() } });
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.running = false;
    for (const d of this.wiring.splice(0)) d.dispose();
    if (client && client.state !== State.Stopped) {
      try { await client.stop(2000); } catch { /* already dead */ }
    }
    await client?.dispose().catch(() => undefined);
  }

  dispose(): void {
    void this.stop();
    this.log.dispose();
    this.stateEmitter.dispose();
  }
}
