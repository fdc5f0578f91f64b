// The parts of `vscode-languageclient/node` that server.ts uses, behaving as the real library does where it
// matters for start and stop: `start()` registers the server's commands (`shiro.remember`) with VS Code once the
// server answered initialize, and fails if one is already registered; `stop()` on a client that is still starting
// throws ("Client is not running and can't be stopped"), so a process started that way is orphaned; `stop()`
// unregisters the commands. The "server" answers initialize when the test releases it.
import { commands, EventEmitter } from './vscode-stub';

export enum State {
  Stopped = 1,
  Starting = 3,
  Running = 2,
}
export enum CloseAction {
  DoNotRestart = 1,
  Restart = 2,
}
export enum ErrorAction {
  Continue = 1,
  Shutdown = 2,
}
export class ResponseError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}
export const DidChangeConfigurationNotification = { type: { method: 'workspace/didChangeConfiguration' } };
export const ExecuteCommandRequest = { type: { method: 'workspace/executeCommand' } };

export const clients = {
  made: [] as LanguageClient[],
  /** Clients waiting for their server's initialize answer. */
  waiting: [] as (() => void)[],
  /** Answer every pending initialize. */
  answerAll(): void {
    for (const answer of this.waiting.splice(0)) answer();
  },
  /** Server processes started and never stopped. */
  get processes(): number {
    return this.made.filter(c => c.process).length;
  },
  reset(): void {
    this.made = [];
    this.waiting = [];
  },
};

export class LanguageClient {
  state = State.Stopped;
  process = false;
  initializeResult: { serverInfo: { name: string } } | undefined;
  private readonly stateEmitter = new EventEmitter<{ oldState: State; newState: State }>();
  readonly onDidChangeState = this.stateEmitter.event;
  private registered: { dispose(): void } | undefined;
  private onStart: Promise<void> | undefined;

  constructor(
    readonly id: string,
    readonly name: string,
    readonly serverOptions: unknown,
    readonly clientOptions: unknown,
  ) {
    clients.made.push(this);
  }

  private setState(newState: State): void {
    const oldState = this.state;
    this.state = newState;
    this.stateEmitter.fire({ oldState, newState });
  }

  start(): Promise<void> {
    if (this.onStart) return this.onStart;
    this.setState(State.Starting);
    this.process = true;
    this.onStart = (async () => {
      await new Promise<void>(resolve => clients.waiting.push(resolve));
      this.initializeResult = { serverInfo: { name: 'shiro-lsp' } };
      try {
        this.registered = commands.registerCommand('shiro.remember', () => undefined);
      } catch (error) {
        this.setState(State.Stopped);
        throw error;
      }
      this.setState(State.Running);
    })();
    return this.onStart;
  }

  async stop(_timeout?: number): Promise<void> {
    if (this.state === State.Stopped) return;
    if (this.state !== State.Running)
      throw new Error(`Client is not running and can't be stopped. It's current state is: ${this.state}`);
    this.registered?.dispose();
    this.process = false;
    this.onStart = undefined;
    this.setState(State.Stopped);
  }

  dispose(timeout?: number): Promise<void> {
    return this.stop(timeout);
  }

  error(_message: string, _data?: unknown, _showNotification?: boolean | 'force'): void {}
  onNotification(): { dispose(): void } {
    return { dispose() {} };
  }
  onRequest(): { dispose(): void } {
    return { dispose() {} };
  }
  async sendRequest(): Promise<unknown> {
    return undefined;
  }
  async sendNotification(): Promise<void> {}
}
