// Whether the transcript follows its end (new entries and size changes keep the end in view). Pure: no
// DOM; transcript.ts feeds it what the scroll container reports.
//
// Only the reader turns following off, and the reader always wins: a scroll that moved the view up,
// away from the end, with the view's width unchanged, is the reader's (wheel, scrollbar, keys). Scrolls
// that layout causes never turn it off, so a view that was at the end stays there: scroll anchoring
// (entries above the view getting their real height) moves the view and its end together; a taller
// view is clamped to the end; only a new width (the view resized, hidden or shown) reflows the text
// and can move the view up and away from the end.

/** What a scroll container reports: its `scrollTop`, `scrollHeight`, `clientHeight`, `clientWidth`. */
export interface ScrollGeometry {
  top: number;
  height: number;
  viewHeight: number;
  viewWidth: number;
}

/** Within this many pixels of the end counts as at the end. */
export const NEAR_END = 80;

export function atTheEnd(g: ScrollGeometry): boolean {
  return g.height - g.top - g.viewHeight < NEAR_END;
}

export class FollowEnd {
  following = true;
  private last: ScrollGeometry | undefined;

  /** A scroll event. Returns whether the view still follows the end. */
  scrolled(g: ScrollGeometry): boolean {
    const before = this.last;
    this.last = g;
    if (atTheEnd(g)) this.following = true;
    else if (before && g.top < before.top && before.viewWidth === g.viewWidth) this.following = false;
    return this.following;
  }

  /** The reader asked to go up (a wheel turned up): stop following now, before the scroll lands. */
  readerWentUp(): void {
    this.following = false;
  }

  /** The panel scrolled to the end itself (a new prompt, "Jump to latest", a whole transcript). */
  stuck(g: ScrollGeometry): void {
    this.following = true;
    this.last = g;
  }

  /** The view's size changed (no scroll event need come): remember it, so the next scroll is compared with it. */
  resized(g: ScrollGeometry): void {
    this.last = g;
  }
}
