// Starts `python -m shiro_lsp` through vscode-languageclient, restarts it if it dies (telling the user),
// and reports a start failure with an actionable error ("Show log" opens the server's stderr).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as vscode from 'vscode';
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  LanguageClient,
  ResponseError,
  State,
} from 'vscode-languageclient/node';
import type {
  CloseHandlerResult,
  ErrorHandlerResult,
  LanguageClientOptions,
  ServerOptions,
} from 'vscode-languageclient/node';
import { errorReason, reportEnvFailure, reportRestart, reportServerFailure } from './errors';
import { initializationOptions, SETTING_KEYS } from './options';
import type { ClientRequest, InitializationOptions, ParamsOf, ResultOf } from '../shared/protocol';
import { resolvePython } from './pythonPath';
import type { PythonChoice } from './pythonPath';
import { bundledWheel, ensureServerEnv, EnvSetupError } from './serverEnv';
import { Lifecycle } from './lifecycle';
import { knownFolders } from './workspaceFolders';
import { RestartPolicy } from './restartPolicy';
import { configurationAnswer, EndpointGate, endpointPlan, PASS, trustedView } from './settingsTrust';
import type { EndpointAnswer } from './settingsTrust';

export const API_KEY_SECRET = 'shiro.apiKey';

/**
 * `-P` (Python 3.11+, which the server needs anyway): the working directory, the workspace, is not put first on
 * sys.path, so a repository's own `shiro_lsp/` or `json.py` is never imported in place of the real ones.
 */
export const SAFE_PATH_FLAG = '-P';

/** The identity of this window's workspace, for remembered answers. */
export function workspaceId(): string {
  return (
    vscode.workspace.workspaceFile?.toString() ??
    (vscode.workspace.workspaceFolders ?? []).map(f => f.uri.toString()).join('|')
  );
}

/** A URL as shown to the user: its password (if any) hidden. */
export function shownUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/i, '$1***@');
}

/** Why `python -m shiro_lsp` cannot start, in the interpreter's own words (its last stderr line), if it can't. */
export function diagnose(python: string, cwd: string | undefined): Promise<string | undefined> {
  return new Promise(resolve => {
    execFile(
      python,
      [SAFE_PATH_FLAG, '-c', 'import shiro_lsp.__main__'],
      { cwd, timeout: 15_000 },
      (error, _stdout, stderr) => {
        if (!error) {
          resolve(undefined);
          return;
        }
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          resolve(`there is no interpreter at ${python}`);
          return;
        }
        const lines = String(stderr).trim().split('\n').filter(Boolean);
        const last = lines.at(-1);
        if (last && /unknown option.*-P/i.test(last)) {
          resolve(`${python} is older than Python 3.11`);
          return;
        }
        resolve(last ?? (error as NodeJS.ErrnoException).code ?? error.message);
      },
    );
  });
}

/** The modal question before a trusted workspace's own shiro.baseUrl gets the chats and the stored key. */
async function askEndpoint(url: string, instead: string | undefined): Promise<EndpointAnswer | undefined> {
  const allow = 'Use it for this workspace';
  const deny = 'Keep my endpoint';
  const choice = await vscode.window.showWarningMessage(
    `This workspace's settings set shiro.baseUrl to ${shownUrl(url)}.`,
    {
      modal: true,
      detail:
        'Shiro would send your chats there, with your API key, instead of to ' +
        `${instead ? shownUrl(instead) : 'your own endpoint (the default)'}. ` +
        'Allow it only for an endpoint you know. The answer is kept for this workspace and this URL.',
    },
    deny,
    allow,
  ); // the first button is the default one: Enter keeps the user's endpoint
  return choice === allow ? 'allow' : choice === deny ? 'deny' : undefined;
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
  private restarting = false;
  /** Every start and stop goes through here, one at a time (see lifecycle.ts). */
  private readonly lifecycle = new Lifecycle({ start: () => this.startNow(), stop: () => this.stopNow() });
  private python = 'python3';
  /** What the last start read that only a restart can change (startInputs), once that start began. */
  private startedWith: string | undefined;
  private choice: PythonChoice | undefined;
  /** The last errors shown or logged, for "Shiro: Diagnose" (newest last). */
  readonly recentErrors: string[] = [];
  private readonly stateEmitter = new vscode.EventEmitter<'starting' | 'running' | 'stopped' | 'failed'>();
  readonly onDidChangeState = this.stateEmitter.event;

  private readonly endpoints: EndpointGate;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly wire: Wiring,
  ) {
    this.log = vscode.window.createOutputChannel('Shiro', { log: true });
    this.endpoints = new EndpointGate(
      {
        get: key => context.globalState.get<EndpointAnswer>(key),
        set: (key, answer) => context.globalState.update(key, answer),
      },
      text => createHash('sha256').update(text).digest('hex'),
      askEndpoint,
    );
  }

  /** The endpoint the chats and the key go to: the user's, or this trusted workspace's own once allowed. */
  baseUrl(): string | undefined {
    const trusted = vscode.workspace.isTrusted;
    return this.endpoints.decide(
      endpointPlan(vscode.workspace.getConfiguration('shiro'), trusted),
      workspaceId(),
      () => {
        this.log.info("The workspace's shiro.baseUrl was allowed for this workspace");
        void this.pushConfiguration();
      },
    );
  }

  /**
   * What a server keeps for its life: the trust it was started with, its interpreter setting and its state root
   * (the rest is pushed to it as it changes).
   */
  private startInputs(): string {
    const view = trustedView(vscode.workspace.getConfiguration('shiro'), vscode.workspace.isTrusted);
    return JSON.stringify([
      vscode.workspace.isTrusted,
      view.get<string>('pythonPath') ?? '',
      (view.get<string>('home') ?? '').trim(),
    ]);
  }

  /**
   * Restart if trust, the interpreter setting or the state root differ from what the running (or starting) server
   * was started with. Granting trust fires the grant and the settings change it unlocks, one after the other:
   * the second finds the first's restart already has them, and the chat sent meanwhile is not cut off.
   * Returns whether it restarted.
   */
  async restartIfStale(): Promise<boolean> {
    await this.lifecycle.settled();
    if (this.startedWith === this.startInputs()) return false;
    await this.start();
    return true;
  }

  /** Forget every remembered answer about a workspace's own endpoint (asked again at the next start). */
  async forgetEndpointAnswers(): Promise<number> {
    const keys = this.context.globalState.keys().filter(k => k.startsWith('shiro.endpoint.'));
    for (const key of keys) await this.context.globalState.update(key, undefined);
    this.endpoints.forgetDismissed();
    return keys.length;
  }

  /** The settings as Shiro may use them (settingsTrust.ts): a repository never picks the home, the key's URL... */
  settings(): { get<T>(key: string): T | undefined } {
    return trustedView(vscode.workspace.getConfiguration('shiro'), vscode.workspace.isTrusted, this.baseUrl());
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
  get interpreter(): PythonChoice | undefined {
    return this.choice;
  }

  /** The server's name and version from its initialize answer. */
  get serverInfo(): { name: string; version?: string } | undefined {
    return this.client?.initializeResult?.serverInfo;
  }

  /**
   * The settings' interpreter, else a packaged server's private environment (built on first start), else
   * the default.
   */
  private async interpreterChoice(): Promise<PythonChoice | undefined> {
    const choice = await resolvePython(vscode.workspace.isTrusted);
    if (choice.refused) this.log.warn(`Restricted Mode: ${choice.refused}`);
    if (choice.source === 'setting') return choice;
    const wheel = await bundledWheel(this.context.extensionPath);
    if (!wheel) return choice;
    try {
      const command = await ensureServerEnv({
        storageDir: this.context.globalStorageUri.fsPath,
        extensionVersion: String((this.context.extension.packageJSON as { version?: string }).version ?? '0'),
        wheel,
        basePython: choice.command,
        log: this.log,
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

  get isRunning(): boolean {
    return this.running && this.client?.state === State.Running;
  }

  /** A request of the wire contract: its params and its result are the method's (protocol.gen.ts). */
  sendRequest<M extends ClientRequest>(
    method: M,
    params: ParamsOf<M>,
    token?: vscode.CancellationToken,
  ): Promise<ResultOf<M>> {
    return this.sendUntyped(method, params, token) as Promise<ResultOf<M>>;
  }

  /** A request whose method is only known at run time (a `/` command's steps, workspace/executeCommand). */
  async sendUntyped(method: string, params: object, token?: vscode.CancellationToken): Promise<unknown> {
    await this.untilReady();
    if (!this.client || !this.isRunning) {
      throw new Error('Shiro\'s language server is not running. Run "Shiro: Restart server" or "Shiro: Show log".');
    }
    return token ? this.client.sendRequest(method, params, token) : this.client.sendRequest(method, params);
  }

  /** A request sent while the server starts, or restarts after a crash, waits for it (up to 30 s). */
  private async untilReady(): Promise<void> {
    if (this.isRunning) return;
    await new Promise<void>(resolve => {
      const done = (): void => {
        clearTimeout(timer);
        sub.dispose();
        resolve();
      };
      const timer = setTimeout(done, 30_000);
      const sub = this.onDidChangeState(state => {
        if (state !== 'starting') done();
      });
      void this.lifecycle.settled().then(() => {
        if (this.isRunning || !this.client || !(this.restarting || this.client.state === State.Starting)) done();
      });
    });
  }

  async sendNotification(method: string, params: object): Promise<void> {
    if (this.client && this.isRunning) await this.client.sendNotification(method, params);
  }

  private async options(): Promise<InitializationOptions> {
    const apiKey = await this.context.secrets.get(API_KEY_SECRET);
    return initializationOptions(
      vscode.workspace.getConfiguration('shiro'),
      apiKey,
      vscode.workspace.isTrusted,
      this.baseUrl(),
    );
  }

  /** Stop the server (if any) and start a new one with the current settings; concurrent calls are serialised. */
  start(): Promise<void> {
    return this.lifecycle.restart();
  }

  private async startNow(): Promise<void> {
    this.startedWith = this.startInputs();
    // the folders decide the server's root and, in Restricted Mode, which interpreters count as the workspace's
    const folders = await knownFolders();
    const choice = await this.interpreterChoice();
    if (!choice) return;
    this.choice = choice;
    this.python = choice.command;
    this.log.info(`Starting ${this.python} -m shiro_lsp (interpreter from ${choice.source})`);
    const cwd = folders[0]?.uri.fsPath;
    const serverOptions: ServerOptions = {
      command: this.python,
      args: [SAFE_PATH_FLAG, '-m', 'shiro_lsp'],
      options: { cwd },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      initializationOptions: await this.options(),
      outputChannel: this.log,
      revealOutputChannelOn: 4, // RevealOutputChannelOn.Never: we show our own actionable messages
      errorHandler: {
        error: (_e, _m, count): ErrorHandlerResult => ({
          action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
          handled: true,
        }),
        closed: () => this.onClosed(),
      },
      initializationFailedHandler: () => false,
      // The extension is the server's only source of settings: a `workspace/configuration` pull for `shiro` is
      // answered from the trusted view, and the library never forwards VS Code's raw (workspace) values.
      middleware: {
        workspace: {
          configuration: async (params, token, next) => {
            const answers = configurationAnswer(params.items, this.settings(), SETTING_KEYS);
            if (answers.every(a => a !== PASS)) return answers;
            const rest = await next(params, token);
            if (rest instanceof ResponseError) return rest;
            return answers.map((a, i) => (a === PASS ? (rest as unknown[])[i] : a));
          },
          didChangeConfiguration: async () => {
            /* pushConfiguration sends Shiro's own view */
          },
        },
      },
    };
    const client = new ShiroLanguageClient('shiro', 'Shiro', serverOptions, clientOptions);
    this.client = client;
    this.wiring = this.wire(client);
    this.wiring.push(
      client.onDidChangeState(e => {
        if (e.newState === State.Running) {
          this.running = true;
          this.restarting = false;
          this.stateEmitter.fire('running');
        } else if (e.newState === State.Starting) this.stateEmitter.fire('starting');
        else if (e.newState === State.Stopped && this.client === client) this.stateEmitter.fire('stopped');
      }),
    );
    this.stateEmitter.fire('starting');
    try {
      await client.start();
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
    void reportServerFailure(
      this.python,
      'it stopped 5 times in 3 minutes and will not be restarted automatically',
      this.log,
    );
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  /** Send the current settings (API key included, never logged) as workspace/didChangeConfiguration. */
  async pushConfiguration(): Promise<void> {
    if (!this.client || !this.isRunning) return;
    await this.client.sendNotification(DidChangeConfigurationNotification.type, {
      settings: { shiro: await this.options() },
    });
  }

  /** Stop the server, after any start or stop already asked for. */
  stop(): Promise<void> {
    return this.lifecycle.stop();
  }

  private async stopNow(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.running = false;
    for (const d of this.wiring.splice(0)) d.dispose();
    // the library's own restart after a crash may be under way: a starting client cannot be stopped, so wait for it
    if (client?.state === State.Starting) await client.start().catch(() => undefined);
    if (client && client.state !== State.Stopped) {
      try {
        await client.stop(2000);
      } catch {
        /* already dead */
      }
    }
    await client?.dispose().catch(() => undefined);
  }

  dispose(): void {
    void this.lifecycle.dispose().finally(() => {
      this.log.dispose();
      this.stateEmitter.dispose();
    });
  }
}
