import type { NewSessionResult, SessionInfo } from '../shared/protocol';

/** "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago", else the date. */
export function formatAge(iso: string, now: Date = new Date()): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return 'unknown age';
  const seconds = Math.max(0, (now.getTime() - then) / 1000);
  if (seconds < 60) return 'just now';
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.floor(hours / 24);
  if (days === 1) return 'yesterday';
  if (days < 30) return `${days} days ago`;
  return new Date(then).toISOString().slice(0, 10);
}

export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

export interface SessionPickItem {
  label: string;
  description: string;
  detail: string;
  sessionId: string;
  current: boolean;
}

/** U+2060 WORD JOINER: zero width, never drawn, no line break. */
export const WORD_JOINER = '\u2060';

/**
 * A Resume-picker label that looks and reads like `title` but that VS Code's QuickPick cannot match
 * against what is typed. The QuickPick moves rows whose label matches the typed text to the top and sorts
 * them by that match, which would undo the server's ranking (best message match first); turning that off
 * (`sortByLabel`, `matchOnLabel`) is proposed API only (microsoft/vscode#73904). Its label match is a prefix,
 * camel-case or contiguous-substring match, so a word joiner between every two characters (grapheme
 * clusters, so accents and combined scripts stay whole) keeps any typed text from matching. The detail (the
 * snippet) still highlights the words that matched.
 */
export function unmatchableLabel(title: string): string {
  const clusters = [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(title)].map(s => s.segment);
  return clusters.join(WORD_JOINER);
}

/** The text a person sees in a label made by {@link unmatchableLabel}. */
export const shownLabel = (label: string): string => label.split(WORD_JOINER).join('');

/**
 * The shortest prefix (at least `min` characters) of each id that no other listed id shares. UUIDv7
 * ids start with their timestamp, so sessions of the same minute need more than 8 characters.
 */
export function distinguishingIds(ids: readonly string[], min = 8): Map<string, string> {
  const out = new Map<string, string>();
  for (const id of ids) {
    let n = Math.min(min, id.length);
    while (n < id.length && ids.some(other => other !== id && other.startsWith(id.slice(0, n)))) n++;
    out.set(id, id.slice(0, n));
  }
  return out;
}

/**
 * Resume-picker rows. A plain listing is sorted newest first; search results (`ranked`) keep the
 * server's order (best match first) and show the matching text as the detail, the id and model
 * moving to the description.
 */
export function sessionPickItems(
  sessions: SessionInfo[],
  now: Date = new Date(),
  currentId?: string,
  ranked = false,
): SessionPickItem[] {
  const shortIds = distinguishingIds(sessions.map(s => s.id));
  const ordered = ranked
    ? [...sessions]
    : [...sessions].sort((a, b) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt));
  return ordered.map(s => {
    const idAndModel = `${shortIds.get(s.id) ?? s.id}${s.model ? ` · ${s.model}` : ''}`;
    const current = s.id === currentId ? 'current · ' : '';
    const age = `${current}${formatAge(s.updatedAt, now)} · ${plural(s.messageCount, 'message')}`;
    return {
      label: s.title && s.title !== 'untitled' ? s.title : '(untitled)',
      description: s.snippet ? `${age} · ${idAndModel}` : age,
      detail: s.snippet ? s.snippet : idAndModel,
      sessionId: s.id,
      current: s.id === currentId,
    };
  });
}

/** What the picker sends as `shiro/session/list` params for what is typed (blank = the plain listing). */
export function listParams(typed: string, limit = 50): { limit: number; query?: string } {
  const query = typed.trim().slice(0, 500);
  return query ? { limit, query } : { limit };
}

/** The client-side check of a new title (the server checks again and says why in words). */
export function titleProblem(typed: string): string | undefined {
  const title = typed.trim();
  if (!title) return 'Type a title.';
  if (title.length > 200) return `At most 200 characters (this is ${title.length}).`;
  return undefined;
}

export interface SearchTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

/**
 * The Resume picker's server search as you type: each change waits `delayMs` for the next one
 * (debounce), and an answer that arrives after a newer query was sent is dropped, so the rows
 * always belong to what is typed now.
 */
export class SessionSearch {
  private timer: unknown;
  private sent = 0;
  private typed = '';

  constructor(
    private readonly fetch: (query: string) => Promise<SessionInfo[]>,
    private readonly show: (query: string, sessions: SessionInfo[]) => void,
    private readonly failed: (error: unknown) => void,
    private readonly busy: (busy: boolean) => void = () => {},
    private readonly delayMs = 250,
    private readonly timers: SearchTimers = {
      set: (fn, ms) => setTimeout(fn, ms),
      clear: handle => clearTimeout(handle as ReturnType<typeof setTimeout>),
    },
  ) {}

  /** The text in the picker changed. */
  type(value: string): void {
    this.typed = value;
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = this.timers.set(() => {
      this.timer = undefined;
      void this.run();
    }, this.delayMs);
  }

  /** Ask now for what is typed (the first listing, or after a rename or delete). */
  async run(): Promise<void> {
    if (this.timer !== undefined) {
      this.timers.clear(this.timer);
      this.timer = undefined;
    }
    const query = this.typed;
    const mine = ++this.sent;
    this.busy(true);
    try {
      const sessions = await this.fetch(query);
      if (mine === this.sent) this.show(query, sessions);
    } catch (error) {
      if (mine === this.sent) this.failed(error);
    } finally {
      if (mine === this.sent) this.busy(false);
    }
  }

  dispose(): void {
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = undefined;
    this.sent++;
  }
}

/**
 * The reference's line for /sessions: `${id8}  ${updatedAt 16 chars}  ${n}msg  ${title}` (a longer id when
 * 8 are ambiguous).
 */
export function sessionLine(s: SessionInfo, shownId: string = s.id.slice(0, 8)): string {
  return `${shownId}  ${s.updatedAt.slice(0, 16).replace('T', ' ')}  ${s.messageCount}msg  ${s.title}`;
}

export function savedPreviousMessage(previous: NewSessionResult['previous']): string {
  if (!previous || previous.messageCount === 0) return 'Started a new session.';
  const title = previous.title && previous.title !== 'untitled' ? `: "${previous.title}"` : '';
  return `Saved ${plural(previous.messageCount, 'message')}${title} — resume it with Shiro: Resume session.`;
}

/** /sessions as buttons: title and distinguishing id; the current session is left out (it is open). */
export function sessionLinks(
  sessions: SessionInfo[],
  currentId?: string,
  now: Date = new Date(),
): { id: string; label: string }[] {
  return sessionPickItems(sessions, now, currentId)
    .filter(i => !i.current)
    .map(i => ({ id: i.sessionId, label: `${i.label} · ${i.detail.split(' · ')[0]} · ${i.description}` }));
}
