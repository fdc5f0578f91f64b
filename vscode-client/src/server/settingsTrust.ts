// What a repository's own settings (.vscode/settings.json, a .code-workspace file) may choose. VS Code's model:
// a workspace is code someone else wrote; in Restricted Mode nothing of it runs, and even a trusted one never
// picks where the user's key goes or where the user's own state lives. Every Shiro setting that runs code or
// moves a secret is read here, from `inspect()`, never through a plain `get()` that would hand back a
// workspace value:
//   pythonPath        the interpreter: user value; a workspace value only once the workspace is trusted.
//                     In Restricted Mode even a user value that points into the workspace is refused.
//   checkCommand      a command Shiro runs to check the work: user value; a workspace value only once trusted.
//   baseUrl           where the chats and the API key go: user value; a trusted workspace's own URL only after
//                     the user said yes to that URL for that workspace (endpointPlan + decideEndpoint).
//   home              the state root (its mcp.json counts as the user's own): user value only, always.
//   localServerUrls   what "Find a local model server" probes: user value only, always.
//   webFetch.allowHosts the hosts web_fetch may reach on this machine or the local network: user value only.
//   bashSandbox       a workspace may make it stricter, never weaker (off < auto < required).
//   bashSandboxNetwork a workspace may turn it off, never on.
// The rest (model, api, memory, limits, toolCallFormat) neither runs code nor moves a secret: plain `get()`.
import * as path from 'node:path';

/** The parts of `WorkspaceConfiguration.inspect()` used here. */
export interface Inspection<T> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/** A `WorkspaceConfiguration` for the `shiro` section (tests pass a plain object). */
export interface SettingsSource {
  get<T>(key: string): T | undefined;
  inspect<T>(key: string): Inspection<T> | undefined;
}

export const USER_ONLY: ReadonlySet<string> = new Set(['home', 'localServerUrls', 'webFetch.allowHosts']);
/** What package.json lists in `capabilities.untrustedWorkspaces.restrictedConfigurations` (a test keeps them equal). */
export const RESTRICTED = [
  'shiro.pythonPath',
  'shiro.baseUrl',
  'shiro.home',
  'shiro.localServerUrls',
  'shiro.webFetch.allowHosts',
  'shiro.checkCommand',
] as const;

const present = (v: unknown): boolean => v !== undefined && v !== null && !(typeof v === 'string' && !v.trim());

/** The user's own value (user settings, else the default): what a workspace can never change. */
export function userValue<T>(cfg: SettingsSource, key: string): T | undefined {
  const i = cfg.inspect<T>(key);
  if (!i) return undefined;
  return present(i.globalValue) ? i.globalValue : i.defaultValue;
}

/** The workspace's own value (a folder's over the workspace file's), if it sets one. */
export function workspaceValue<T>(cfg: SettingsSource, key: string): T | undefined {
  const i = cfg.inspect<T>(key);
  if (!i) return undefined;
  if (present(i.workspaceFolderValue)) return i.workspaceFolderValue;
  return present(i.workspaceValue) ? i.workspaceValue : undefined;
}

const SANDBOX = ['off', 'auto', 'required'] as const;
type Sandbox = (typeof SANDBOX)[number];

/** The stricter of the user's and the workspace's bash sandbox. */
export function strictestSandbox(user: unknown, workspace: unknown): Sandbox | undefined {
  const rank = (v: unknown): number => SANDBOX.indexOf(v as Sandbox);
  const best = Math.max(rank(user), rank(workspace));
  return best >= 0 ? SANDBOX[best] : undefined;
}

/** The settings as Shiro may use them: `get()` with the rules above applied (the endpoint is decided apart). */
export function trustedView(
  cfg: SettingsSource,
  trusted: boolean,
  endpoint?: string,
): { get<T>(key: string): T | undefined } {
  return {
    get<T>(key: string): T | undefined {
      if (USER_ONLY.has(key)) return userValue<T>(cfg, key);
      if (key === 'baseUrl') return (endpoint ?? userValue<string>(cfg, 'baseUrl')) as T | undefined;
      if (key === 'pythonPath' || key === 'checkCommand') {
        const fromWorkspace = trusted ? workspaceValue<string>(cfg, key) : undefined;
        return (fromWorkspace ?? userValue<string>(cfg, key)) as T | undefined;
      }
      if (key === 'bashSandbox')
        return strictestSandbox(userValue(cfg, key), workspaceValue(cfg, key)) as T | undefined;
      if (key === 'bashSandboxNetwork') {
        const user = userValue<boolean>(cfg, key);
        const own = workspaceValue<boolean>(cfg, key);
        if (user === undefined && own === undefined) return undefined;
        return (user === true && own !== false) as T;
      }
      return cfg.get<T>(key);
    },
  };
}

// --- the interpreter --------------------------------------------------------------------------------------

export type PythonSettingOrigin = 'user' | 'workspace';
export interface PythonSetting {
  value: string;
  origin: PythonSettingOrigin;
}

/** Whether `file` lies inside one of `folders` (a workspace's own interpreter, e.g. `.venv/bin/python`). */
export function insideAny(file: string, folders: readonly string[]): boolean {
  if (!path.isAbsolute(file)) return false;
  const target = path.resolve(file);
  return folders.some(folder => {
    const root = path.resolve(folder);
    return target === root || target.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
  });
}

/**
 * `shiro.pythonPath` as it may be used: a trusted workspace's value, else the user's. In Restricted Mode a
 * workspace value is ignored entirely, and so is a user value that names the workspace (`${workspaceFolder}`,
 * or an interpreter inside a workspace folder): that would be the repository's program all the same.
 * `expand` turns the raw value into a path. Returns what to use and, when something was refused, why.
 */
export function pythonSetting(
  cfg: SettingsSource,
  trusted: boolean,
  folders: readonly string[],
  expand: (raw: string) => string,
): { setting?: PythonSetting; refused?: string } {
  const fromWorkspace = workspaceValue<string>(cfg, 'pythonPath');
  if (trusted && typeof fromWorkspace === 'string')
    return { setting: { value: expand(fromWorkspace), origin: 'workspace' } };
  const refusedWorkspace =
    fromWorkspace !== undefined
      ? `the workspace's shiro.pythonPath (${String(fromWorkspace).trim()}) is ignored in Restricted Mode`
      : undefined;
  const raw = userValue<string>(cfg, 'pythonPath');
  if (typeof raw !== 'string' || !raw.trim()) return { refused: refusedWorkspace };
  const value = expand(raw);
  // a relative path with a separator (`.venv/bin/python`) is found from the server's working directory: the workspace
  const relative = !path.isAbsolute(value) && /[\\/]/.test(value);
  if (!trusted && (raw.includes('${workspaceFolder}') || relative || insideAny(value, folders))) {
    const why = `shiro.pythonPath (${value}) is inside this workspace, so it is not used in Restricted Mode`;
    return { refused: refusedWorkspace ? `${refusedWorkspace}; ${why}` : why };
  }
  return { setting: { value, origin: 'user' }, refused: refusedWorkspace };
}

// --- the endpoint -----------------------------------------------------------------------------------------

export interface EndpointPlan {
  /** The user's own URL (empty: the server's default, OPENAI_BASE_URL or OpenAI). */
  user?: string;
  /** A trusted workspace's own URL when it differs from the user's: used only once the user allowed it. */
  workspace?: string;
}

const sameUrl = (a: string | undefined, b: string | undefined): boolean =>
  (a ?? '').trim().replace(/\/+$/, '') === (b ?? '').trim().replace(/\/+$/, '');

export function endpointPlan(cfg: SettingsSource, trusted: boolean): EndpointPlan {
  const user = userValue<string>(cfg, 'baseUrl');
  const plan: EndpointPlan = typeof user === 'string' && user.trim() ? { user: user.trim() } : {};
  const own = workspaceValue<string>(cfg, 'baseUrl');
  if (trusted && typeof own === 'string' && !sameUrl(own, user)) plan.workspace = own.trim();
  return plan;
}

export type EndpointAnswer = 'allow' | 'deny';

/** Remembered answers (globalState), keyed by a hash of workspace + URL: no URL (it may carry a password) is stored. */
export interface AnswerMemory {
  get(key: string): EndpointAnswer | undefined;
  set(key: string, answer: EndpointAnswer): PromiseLike<void> | void;
}

/**
 * The URL to use now: the user's, or the trusted workspace's own once the user allowed it for this workspace.
 * Not yet answered: the user's URL is used, and `ask` runs (at most once per workspace and URL at a time);
 * a yes or no is remembered, a dismissed dialog only until the window reloads (then it asks again).
 */
export class EndpointGate {
  private readonly pending = new Map<string, Promise<EndpointAnswer | undefined>>();
  private readonly dismissed = new Set<string>();

  constructor(
    private readonly memory: AnswerMemory,
    private readonly hash: (text: string) => string,
    private readonly ask: (url: string, instead: string | undefined) => Promise<EndpointAnswer | undefined>,
  ) {}

  key(workspaceId: string, url: string): string {
    return `shiro.endpoint.${this.hash(`${workspaceId}\n${url.trim().replace(/\/+$/, '')}`)}`;
  }

  /** The URL for now; `onAllowed` runs when a pending question is answered yes (push the settings again). */
  decide(plan: EndpointPlan, workspaceId: string, onAllowed?: () => void): string | undefined {
    if (!plan.workspace) return plan.user;
    const key = this.key(workspaceId, plan.workspace);
    const answer = this.memory.get(key);
    if (answer === 'allow') return plan.workspace;
    if (answer === 'deny' || this.dismissed.has(key)) return plan.user;
    if (!this.pending.has(key)) {
      const question = this.ask(plan.workspace, plan.user)
        .then(
          async a => {
            if (a) await this.memory.set(key, a);
            else this.dismissed.add(key);
            return a;
          },
          () => undefined,
        )
        .finally(() => this.pending.delete(key));
      this.pending.set(key, question);
      void question.then(a => {
        if (a === 'allow') onAllowed?.();
      });
    }
    return plan.user;
  }

  /** Ask again about dismissed questions (remembered answers are the caller's to clear). */
  forgetDismissed(): void {
    this.dismissed.clear();
  }

  /** The question still open for this workspace's URL, if any (tests and a start that wants to wait). */
  whenAnswered(plan: EndpointPlan, workspaceId: string): Promise<EndpointAnswer | undefined> {
    return plan.workspace
      ? (this.pending.get(this.key(workspaceId, plan.workspace)) ?? Promise.resolve(undefined))
      : Promise.resolve(undefined);
  }
}

// --- the language client ----------------------------------------------------------------------------------

/**
 * The language client answers a server's `workspace/configuration` pull from VS Code's merged settings, which
 * include the workspace's values. Shiro's server learns its settings only from the extension
 * (initializationOptions and our own didChangeConfiguration pushes); a pull for `shiro` gets the view above.
 */
export function configurationAnswer(
  items: readonly { section?: string }[],
  view: { get<T>(key: string): T | undefined },
  keys: readonly string[],
): (unknown | typeof PASS)[] {
  return items.map(item => {
    const section = item.section ?? '';
    if (section === 'shiro') return Object.fromEntries(keys.map(k => [k, view.get(k)]));
    if (section.startsWith('shiro.')) return view.get(section.slice('shiro.'.length)) ?? null;
    return PASS;
  });
}

/** Marks an item `configurationAnswer` leaves to the library (not a `shiro` section). */
export const PASS = Symbol('pass');
