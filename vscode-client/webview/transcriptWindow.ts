import type { ChatEntry } from '../src/shared/webviewProtocol';
// Which transcript entries the panel keeps in the DOM. Pure: no DOM, no vscode.
//
// A resumed session can hold thousands of entries; drawing them all freezes the panel (issue 12). The
// panel draws only the newest `page` entries and prepends older pages when the reader scrolls up, so
// the cost of a redraw (resume, hide/show) does not grow with the session.

export const PAGE = 60;

export type Upsert =
  | { kind: 'append'; entry: ChatEntry } // a new entry at the end: draw it
  | { kind: 'update'; entry: ChatEntry } // a drawn entry changed: redraw it
  | { kind: 'offscreen' }; // an entry above the window changed: drawn when scrolled to

export class TranscriptWindow {
  private entries: ChatEntry[] = [];
  private readonly index = new Map<string, number>();
  /** Index of the first drawn entry; everything from here to the end is in the DOM. */
  start = 0;

  constructor(readonly page: number = PAGE) {}

  get length(): number {
    return this.entries.length;
  }
  /** How many older entries are not drawn. */
  get hidden(): number {
    return this.start;
  }

  /** A whole new transcript: returns the entries to draw (the newest page). */
  reset(entries: readonly ChatEntry[]): ChatEntry[] {
    this.entries = [...entries];
    this.index.clear();
    this.entries.forEach((e, i) => this.index.set(e.id, i));
    this.start = Math.max(0, this.entries.length - this.page);
    return this.entries.slice(this.start);
  }

  upsert(entry: ChatEntry): Upsert {
    const at = this.index.get(entry.id);
    if (at === undefined) {
      this.index.set(entry.id, this.entries.length);
      this.entries.push(entry);
      return { kind: 'append', entry };
    }
    this.entries[at] = entry;
    return at >= this.start ? { kind: 'update', entry } : { kind: 'offscreen' };
  }

  /** The next older page to prepend (oldest first); empty when everything is drawn. */
  earlier(): ChatEntry[] {
    const from = Math.max(0, this.start - this.page);
    const page = this.entries.slice(from, this.start);
    this.start = from;
    return page;
  }
}
