import type { SessionInfo } from './protocol';

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

export interface SessionPickItem { label: string; description: string; detail: string; sessionId: string; current: boolean }

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

export function sessionPickItems(sessions: SessionInfo[], now: Date = new Date(), currentId?: string): SessionPickItem[] {
  const shortIds = distinguishingIds(sessions.map(s => s.id));
  return [...sessions]
    .sort((a, b) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt))
    .map(s => ({
      label: s.title && s.title !== 'untitled' ? s.title : '(untitled)',
      description: `${s.id === currentId ? 'current · ' : ''}${formatAge(s.updatedAt, now)} · ${plural(s.messageCount, 'message')}`,
      detail: `${shortIds.get(s.id) ?? s.id}${s.model ? ` · ${s.model}` : ''}`,
      sessionId: s.id,
      current: s.id === currentId,
    }));
}

/** The reference's line for /sessions: `${id8}  ${updatedAt 16 chars}  ${n}msg  ${title}` (a longer id when 8 are ambiguous). */
export function sessionLine(s: SessionInfo, shownId: string = s.id.slice(0, 8)): string {
  return `${shownId}  ${s.updatedAt.slice(0, 16).replace('T', ' ')}  ${s.messageCount}msg  ${s.title}`;
}

export function savedPreviousMessage(previous: { id: string; title: string; messageCount: number } | undefined): string {
  if (!previous || previous.messageCount === 0) return 'Started a new session.';
  const title = previous.title && previous.title !== 'untitled' ? `: "${previous.title}"` : '';
  return `Saved ${plural(previous.messageCount, 'message')}${title} — resume it with Shiro: Resume session.`;
}

/** /sessions as buttons: title and distinguishing id; the current session is left out (it is open). */
export function sessionLinks(sessions: SessionInfo[], currentId?: string, now: Date = new Date()): { id: string; label: string }[] {
  return sessionPickItems(sessions, now, currentId)
    .filter(i => !i.current)
    .map(i => ({ id: i.sessionId, label: `${i.label} · ${i.detail.split(' · ')[0]} · ${i.description}` }));
}
