// The parts of the `vscode` API the tested modules touch. Tests drive `stub` to script the UI.
export const stub = {
  errorChoice: undefined as string | undefined,
  warningChoice: undefined as string | undefined,
  infoChoice: undefined as string | undefined,
  shown: [] as { level: string; message: string; items: string[] }[],
  executed: [] as { command: string; args: unknown[] }[],
  clipboard: '',
  config: {} as Record<string, unknown>,
  /**
   * Per setting, the layers `inspect()` reports; `get()` merges them as VS Code does (folder > workspace >
   * user > default).
   */
  layers: {} as Record<
    string,
    { defaultValue?: unknown; globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown }
  >,
  progress: [] as string[],
  /** Commands registered and not disposed: VS Code refuses a second registration of a name. */
  commands: new Set<string>(),
  logged: [] as string[],
  reset(): void {
    this.progress = [];
    this.layers = {};
    this.commands.clear();
    this.logged = [];
    workspace.isTrusted = true;
    workspace.workspaceFolders = undefined;
    workspace.workspaceFile = undefined;
    this.errorChoice = this.warningChoice = this.infoChoice = undefined;
    this.shown = [];
    this.executed = [];
    this.clipboard = '';
    this.config = {};
  },
};

export class ThemeColor {
  constructor(public readonly id: string) {}
}
export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export class EventEmitter<T> {
  private listeners: ((e: T) => void)[] = [];
  event = (listener: (e: T) => void): { dispose(): void } => {
    this.listeners.push(listener);
    return {
      dispose: () => {
        this.listeners = this.listeners.filter(l => l !== listener);
      },
    };
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class CancellationTokenSource {
  private emitter = new EventEmitter<void>();
  token = {
    isCancellationRequested: false,
    onCancellationRequested: this.emitter.event,
  };
  cancel(): void {
    if (this.token.isCancellationRequested) return;
    this.token.isCancellationRequested = true;
    this.emitter.fire();
  }
  dispose(): void {}
}

export const window = {
  async showErrorMessage(message: string, ...items: string[]): Promise<string | undefined> {
    stub.shown.push({ level: 'error', message, items });
    return stub.errorChoice;
  },
  async showWarningMessage(message: string, ...items: string[]): Promise<string | undefined> {
    stub.shown.push({ level: 'warning', message, items: items.filter(i => typeof i === 'string') });
    return stub.warningChoice;
  },
  async showInformationMessage(message: string, ...items: string[]): Promise<string | undefined> {
    stub.shown.push({ level: 'info', message, items });
    return stub.infoChoice;
  },
  activeTextEditor: undefined,
  createOutputChannel(name: string) {
    const line =
      (level: string) =>
      (message: string): void => {
        stub.logged.push(`${level} ${message}`);
      };
    return {
      name,
      info: line('info'),
      warn: line('warn'),
      error: line('error'),
      appendLine: line('line'),
      show() {},
      dispose() {},
    };
  },
  async withProgress<T>(
    options: { title?: string },
    task: (p: { report(v: { message?: string }): void }) => Promise<T>,
  ): Promise<T> {
    stub.progress.push(options.title ?? '');
    return task({
      report: v => {
        stub.progress.push(v.message ?? '');
      },
    });
  },
};

export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}

export const commands = {
  registerCommand(command: string, _callback: (...args: unknown[]) => unknown): { dispose(): void } {
    if (stub.commands.has(command)) throw new Error(`command '${command}' already exists`);
    stub.commands.add(command);
    return {
      dispose: () => {
        stub.commands.delete(command);
      },
    };
  },
  async executeCommand(command: string, ...args: unknown[]): Promise<unknown> {
    stub.executed.push({ command, args });
    return undefined;
  },
};

export const env = {
  clipboard: {
    async writeText(text: string): Promise<void> {
      stub.clipboard = text;
    },
  },
};

export const workspace = {
  getConfiguration: () => ({
    get: <T>(key: string): T | undefined => {
      const l = stub.layers[key];
      if (!l) return stub.config[key] as T | undefined;
      return (l.workspaceFolderValue ?? l.workspaceValue ?? l.globalValue ?? l.defaultValue) as T | undefined;
    },
    inspect: <T>(key: string) =>
      (stub.layers[key] ?? (key in stub.config ? { globalValue: stub.config[key] } : {})) as {
        defaultValue?: T;
        globalValue?: T;
        workspaceValue?: T;
        workspaceFolderValue?: T;
      },
  }),
  workspaceFolders: undefined as { uri: { fsPath: string; toString(): string }; name: string }[] | undefined,
  workspaceFile: undefined as { toString(): string } | undefined,
  /** Tests fire it after changing `workspaceFolders` (VS Code read the workspace file). */
  foldersChanged: new EventEmitter<void>(),
  onDidChangeWorkspaceFolders(listener: () => void): { dispose(): void } {
    return workspace.foldersChanged.event(listener);
  },
  isTrusted: true,
};

export const extensions = { getExtension: () => undefined };
export const Uri = {
  joinPath: (base: { path: string }, ...parts: string[]) => ({ path: [base.path, ...parts].join('/') }),
};
