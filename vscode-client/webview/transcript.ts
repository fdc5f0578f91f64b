// The transcript: only the newest page of entries is in the DOM (older pages are drawn as the reader
// scrolls up), and the changes of a frame are applied together with one layout read.
import type { ChatEntry } from '../src/shared/webviewProtocol';
import { $, el, post } from './dom';
import { renderEntry } from './entries';
import { isWorkspaceLink } from './markdown';
import { FollowEnd, type ScrollGeometry } from './followEnd';
import { TranscriptWindow } from './transcriptWindow';

const transcript = $<HTMLElement>('transcript');
const nodes = new Map<string, HTMLElement>();
const dirty = new Map<string, ChatEntry>();

function geometry(): ScrollGeometry {
  return {
    top: transcript.scrollTop,
    height: transcript.scrollHeight,
    viewHeight: transcript.clientHeight,
    viewWidth: transcript.clientWidth,
  };
}

// A view that follows the end stays there when entries come or something above or below it (the task
// list, the queue) changes its height; the reader scrolling up stops that at once (followEnd.ts).
const follow = new FollowEnd();
function sawScroll(): void {
  if (!follow.scrolled(geometry())) cancelStick();
}
const resized = new ResizeObserver(() => {
  if (follow.following) stickToBottom();
  else follow.resized(geometry());
});
// "Jump to latest" whenever the end of the transcript is out of view. Only this observer shows it: it
// also reports when no scroll event fires (the view shown again after being hidden, entries getting
// their real height), so the button never stays up over a view that is at the end.
const latest = $<HTMLButtonElement>('latest');
const endMark = el('div', 'end-mark');
endMark.setAttribute('aria-hidden', 'true');
const endWatch = new IntersectionObserver(
  seen => {
    latest.hidden = seen.at(-1)?.isIntersecting ?? latest.hidden;
  },
  { root: transcript, rootMargin: '0px 0px 80px 0px' },
);

// Only the newest page of entries is in the DOM; older pages are drawn when the reader scrolls up.
const window_ = new TranscriptWindow();
const earlier = el('button', 'earlier secondary');
earlier.type = 'button';
earlier.id = 'earlier';
earlier.addEventListener('click', () => showEarlier());

function draw(entry: ChatEntry): HTMLElement {
  const node = renderEntry(entry);
  nodes.set(entry.id, node);
  return node;
}

function updateEarlier(): void {
  const n = window_.hidden;
  earlier.hidden = n === 0;
  earlier.textContent = `Show ${n} earlier ${n === 1 ? 'entry' : 'entries'}`;
}

function showEarlier(): void {
  const page = window_.earlier();
  if (!page.length) return;
  const fragment = document.createDocumentFragment();
  for (const entry of page) fragment.appendChild(draw(entry));
  const before = transcript.scrollHeight;
  earlier.after(fragment);
  updateEarlier();
  transcript.scrollTop += transcript.scrollHeight - before; // keep what the reader was looking at in place
}

// scrolled to the top: draw the next older page (re-observing re-checks, in case the page did not fill the view)
const topWatch = new IntersectionObserver(
  seen => {
    if (!seen.some(s => s.isIntersecting) || window_.hidden === 0) return;
    showEarlier();
    topWatch.unobserve(earlier);
    requestAnimationFrame(() => topWatch.observe(earlier));
  },
  { root: transcript, rootMargin: '200px 0px 0px 0px' },
);

let frame = 0;
export function schedule(entry: ChatEntry): void {
  dirty.set(entry.id, entry);
  if (!frame) frame = requestAnimationFrame(flush);
}

/** Apply every change of this frame: one layout read before the writes, one append, one scroll. */
function flush(): void {
  frame = 0;
  let stick = follow.following;
  const fragment = document.createDocumentFragment();
  for (const entry of dirty.values()) {
    const change = window_.upsert(entry);
    if (change.kind === 'append') {
      fragment.appendChild(draw(entry));
      // always show a new prompt or an approval that needs an answer
      if (entry.kind === 'user' || entry.kind === 'approval') stick = true;
    } else if (change.kind === 'update') {
      const old = nodes.get(entry.id);
      const fresh = draw(entry);
      if (old) {
        if (entry.kind !== 'tool') {
          const openDetails = old.querySelector('details')?.open;
          if (openDetails !== undefined) fresh.querySelector('details')?.toggleAttribute('open', openDetails);
        }
        old.replaceWith(fresh);
      } else fragment.appendChild(fresh);
      if (entry.kind === 'tool' && entry.approval && !entry.approval.decision) stick = true; // a question to answer
    }
  }
  dirty.clear();
  fragment.appendChild(endMark); // (moved) stays the last child
  transcript.appendChild(fragment);
  if (stick) stickToBottom();
}

/** Scroll to the end, and again next frame: off-screen entries only get their real height once drawn. */
let stickFrame = 0;
function stickToBottom(): void {
  latest.hidden = true;
  transcript.scrollTop = transcript.scrollHeight;
  follow.stuck(geometry());
  cancelStick();
  stickFrame = requestAnimationFrame(() => {
    stickFrame = 0;
    if (!follow.following) return;
    transcript.scrollTop = transcript.scrollHeight;
    follow.stuck(geometry());
  });
}

/** The reader scrolled away from the end: a scroll to the end still to come would undo it. */
function cancelStick(): void {
  if (stickFrame) cancelAnimationFrame(stickFrame);
  stickFrame = 0;
}

/** A whole transcript (a fresh or re-created panel, a resume): drawn at once, scrolled to the end. */
export function showEntries(entries: ChatEntry[]): void {
  if (frame) {
    cancelAnimationFrame(frame);
    frame = 0;
  }
  nodes.clear();
  dirty.clear();
  const fragment = document.createDocumentFragment();
  for (const entry of window_.reset(entries)) fragment.appendChild(draw(entry));
  transcript.replaceChildren(earlier, fragment, endMark);
  updateEarlier();
  stickToBottom();
}

export function startTranscript(): void {
  // a relative link in an answer (`[src/calc.py](src/calc.py)`) opens that workspace file
  transcript.addEventListener('click', e => {
    const link = (e.target as Element | null)?.closest?.('.markdown a[href]');
    const href = link?.getAttribute('href') ?? '';
    if (link && isWorkspaceLink(href)) {
      e.preventDefault();
      post({ type: 'openFile', href });
    }
  });
  transcript.append(earlier, endMark);
  updateEarlier();
  endWatch.observe(endMark);
  topWatch.observe(earlier);
  transcript.addEventListener('scroll', sawScroll, { passive: true });
  transcript.addEventListener(
    'wheel',
    e => {
      if (e.deltaY < 0 && transcript.scrollTop > 0) {
        follow.readerWentUp();
        cancelStick();
      }
    },
    { passive: true },
  );
  latest.addEventListener('click', () => stickToBottom());
  resized.observe(transcript);
}
