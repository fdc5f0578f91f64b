// `/` completion and `@` mentions in the prompt: which token the caret is in, and how candidates rank.
// Pure: no DOM, no vscode.

export type MentionKind = 'file' | 'folder' | 'selection' | 'problems' | 'terminal' | 'command';
export interface Candidate {
  kind: MentionKind;
  value: string;
  label: string;
  detail?: string;
}
export interface ActiveToken {
  trigger: '@' | '/';
  start: number;
  end: number;
  query: string;
}

/**
 * The `@word` the caret is at the end of (after the start or a space), or `/word` when the prompt starts
 * with it and the caret is still in that first word. Anything else: undefined (no picker).
 */
export function activeToken(text: string, caret: number): ActiveToken | undefined {
  const before = text.slice(0, caret);
  const slash = /^\/([\w.:-]*)$/.exec(before);
  if (slash) return { trigger: '/', start: 0, end: caret, query: slash[1] };
  const at = /(?:^|\s)@([^\s@]*)$/.exec(before);
  if (!at) return undefined;
  const start = caret - at[1].length - 1;
  return { trigger: '@', start, end: caret, query: at[1] };
}

const baseName = (path: string): string => path.replace(/\/$/, '').split('/').pop() ?? path;

/** Higher is better; -1 = no match. Special entries (selection, problems…) first on an empty query. */
export function score(query: string, c: Candidate): number {
  const q = query.toLowerCase();
  const value = c.value.toLowerCase();
  const label = c.label.toLowerCase();
  const name = baseName(value);
  const special = c.kind !== 'file' && c.kind !== 'folder' ? 1 : 0;
  if (!q) return 10 + special * 100 - Math.min(value.length, 99) / 100;
  if (name === q || label === q) return 1000;
  if (name.startsWith(q) || label.startsWith(q)) return 800 - name.length / 100;
  if (name.includes(q)) return 600 - name.length / 100;
  if (value.startsWith(q)) return 500 - value.length / 1000;
  if (value.includes(q) || label.includes(q)) return 400 - value.length / 1000;
  // the letters in order (fuzzy): fewer gaps first
  let at = -1;
  let gaps = 0;
  for (const ch of q) {
    const next = value.indexOf(ch, at + 1);
    if (next < 0) return -1;
    if (at >= 0 && next !== at + 1) gaps++;
    at = next;
  }
  return 200 - gaps * 10 - value.length / 1000;
}

export function rankCandidates(query: string, candidates: readonly Candidate[], limit = 12): Candidate[] {
  return candidates
    .map(c => ({ c, s: score(query, c) }))
    .filter(x => x.s >= 0)
    .sort((a, b) => b.s - a.s || a.c.value.localeCompare(b.c.value))
    .slice(0, limit)
    .map(x => x.c);
}

/** The prompt with the token replaced (a command keeps a trailing space; a mention goes away: it becomes a chip). */
export function applyPick(text: string, token: ActiveToken, pick: Candidate): { text: string; caret: number } {
  const insert = token.trigger === '/' ? `/${pick.value} ` : '';
  const rest = text.slice(token.end);
  const head = text.slice(0, token.start);
  const joined = token.trigger === '@' && head.endsWith(' ') && rest.startsWith(' ') ? rest.slice(1) : rest;
  return { text: head + insert + joined, caret: head.length + insert.length };
}
