// The review UI in the chat panel: approval previews (files, `+N −M`, Open diff, Deny with a reason), the
// "Changed files" block with Keep/Undo, "Restore checkpoint" on user turns with Redo, and tool-card diffs.
// main.ts calls these hooks; everything here only renders and posts messages (the host does the work).
import { toolDiff } from './toolDiff';
import type { ChangesEntry, ChatEntry, RestoredEntry, WebviewMessage } from '../src/shared/webviewProtocol';

type Post = (m: WebviewMessage) => void;
type ApprovalEntry = Extract<ChatEntry, { kind: 'approval' }>;
type UserEntry = Extract<ChatEntry, { kind: 'user' }>;
type ToolEntry = Extract<ChatEntry, { kind: 'tool' }>;

const NOT_COVERED_LABEL = 'not covered \u2014 left as it is';
const STATUS_MARK: Record<string, string> = { added: 'A', modified: 'M', deleted: 'D', moved: 'R' };

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function button(label: string, cls: string, onClick: () => void, title?: string): HTMLButtonElement {
  const b = el('button', cls, label);
  b.type = 'button';
  if (title) b.title = title;
  b.addEventListener('click', e => {
    e.stopPropagation();
    onClick();
  });
  return b;
}

function counts(text: string): HTMLElement {
  const span = el('span', 'diff-counts');
  const m = /^\+(\d+) \u2212(\d+)$/.exec(text);
  if (!m) {
    span.textContent = text;
    return span;
  }
  span.appendChild(el('span', 'diff-add', `+${m[1]}`));
  span.appendChild(document.createTextNode(' '));
  span.appendChild(el('span', 'diff-del', `\u2212${m[2]}`));
  return span;
}

/** A file's link: its directory part gives way first, so the base name stays legible in a narrow panel. */
function pathLink(from: string | undefined, path: string): HTMLAnchorElement {
  const shown = from ? `${from} → ${path}` : path;
  const cut = Math.max(shown.lastIndexOf('/'), shown.lastIndexOf('\\')) + 1;
  const link = el('a', 'file-path');
  link.href = '#';
  link.title = shown;
  link.append(el('span', 'file-dir', shown.slice(0, cut)), el('span', 'file-base', shown.slice(cut)));
  return link;
}

/** File tools: the files the call touches with `+N −M`, each opening its diff; the raw input folds away. */
export function decorateApproval(card: HTMLElement, entry: ApprovalEntry, post: Post): void {
  const preview = entry.card.preview;
  if (preview) {
    const box = el('div', 'approval-preview');
    const head = el('div', 'approval-preview-head');
    head.appendChild(
      el('span', undefined, preview.files.length === 1 ? 'Proposed change ' : `${preview.files.length} files `),
    );
    head.appendChild(counts(preview.total));
    head.appendChild(
      button('Open diff', 'secondary open-diff', () => post({ type: 'openPreview', id: entry.id, index: 0 })),
    );
    box.appendChild(head);
    const list = el('ul', 'file-list');
    preview.files.forEach((f, index) => {
      const li = el('li', `file-row status-${f.status}`);
      li.appendChild(el('span', 'file-status', STATUS_MARK[f.status] ?? '?'));
      const link = pathLink(f.from, f.path);
      link.addEventListener('click', e => {
        e.preventDefault();
        post({ type: 'openPreview', id: entry.id, index });
      });
      li.appendChild(link);
      li.appendChild(counts(f.counts));
      list.appendChild(li);
    });
    box.appendChild(list);
    const input = card.querySelector('.approval-input');
    if (input) {
      const raw = el('details', 'approval-raw');
      raw.appendChild(el('summary', undefined, 'Raw input'));
      input.replaceWith(raw);
      raw.appendChild(input);
      raw.before(box);
    } else card.appendChild(box);
  }
  if (entry.decision) {
    if (entry.reason) card.appendChild(el('div', 'approval-reason', `Reason: ${entry.reason}`));
    return;
  }
  const reason = el('input', 'deny-reason');
  reason.type = 'text';
  reason.placeholder = 'Reason for Deny (optional, the model reads it)';
  reason.setAttribute('aria-label', 'Reason for Deny');
  reason.addEventListener('keydown', e => {
    if (e.key === 'Enter') {
      e.preventDefault();
      post({ type: 'approve', id: entry.id, decision: 'deny', reason: reason.value });
    }
  });
  card.appendChild(reason);
}

/** What the Deny button of this card sends as its reason. */
export function denyReason(card: HTMLElement): string | undefined {
  const value = card.querySelector<HTMLInputElement>('.deny-reason')?.value.trim();
  return value || undefined;
}

/** "Restore checkpoint" under a user turn that has one. */
export function decorateUser(root: HTMLElement, entry: UserEntry, post: Post): void {
  if (!entry.checkpointId) return;
  const bar = el('div', 'turn-actions');
  bar.appendChild(
    button(
      'Restore checkpoint',
      'link restore-checkpoint',
      () => post({ type: 'restore', id: entry.id }),
      'Put the workspace (and/or the chat) back as it was before this message',
    ),
  );
  root.appendChild(bar);
}

export function renderChanges(entry: ChangesEntry, post: Post): HTMLElement {
  const box = el('div', 'changes-block');
  const head = el('div', 'changes-head');
  head.appendChild(el('span', 'changes-title', `Changed files (${entry.files.length})`));
  const total = counts(entry.total);
  total.title = 'What this turn changed, in all files';
  head.appendChild(total);
  const actions = el('span', 'changes-actions');
  if (entry.pending) {
    actions.appendChild(
      button('Keep all', 'secondary keep-all', () => post({ type: 'keepAll', taskId: entry.taskId })),
    );
    actions.appendChild(
      button('Undo all', 'secondary undo-all', () => post({ type: 'undoAll', taskId: entry.taskId })),
    );
  } else actions.appendChild(el('span', 'changes-reviewed', 'Reviewed'));
  head.appendChild(actions);
  box.appendChild(head);
  const list = el('ul', 'file-list');
  for (const f of entry.files) {
    const li = el('li', `file-row status-${f.status}${f.reviewed ? ' reviewed' : ''}`);
    li.dataset.path = f.path;
    li.appendChild(el('span', 'file-status', STATUS_MARK[f.status] ?? '?'));
    const link = pathLink(f.from, f.path);
    link.title = `${link.title}: open the diff, checkpoint vs now`;
    link.addEventListener('click', e => {
      e.preventDefault();
      post({ type: 'openChange', taskId: entry.taskId, path: f.path });
    });
    li.appendChild(link);
    const own = counts(f.counts);
    own.classList.add('turn-counts');
    own.title = 'What this turn changed in the file';
    li.appendChild(own);
    if (f.since) {
      // changed again since (a later turn, an undo, your edit): the checkpoint vs the file now
      const since = el('span', 'since-counts', 'now');
      since.title = "This turn's checkpoint vs the file now (later turns' changes, undos and your edits included)";
      since.appendChild(counts(f.since));
      li.appendChild(since);
    }
    if (f.notCovered) {
      // no bytes to put back, or the user's own save: undo and restore leave it
      const note = el('span', 'not-covered', NOT_COVERED_LABEL);
      note.title = `Undo and restore leave this file as it is: ${f.notCovered}`;
      li.appendChild(note);
    }
    if (!f.reviewed) {
      li.appendChild(
        button('Keep', 'secondary small keep-file', () =>
          post({ type: 'keepChange', taskId: entry.taskId, path: f.path }),
        ),
      );
      if (!f.notCovered) {
        li.appendChild(
          button('Undo', 'secondary small undo-file', () =>
            post({ type: 'undoChange', taskId: entry.taskId, path: f.path }),
          ),
        );
      }
    } else li.appendChild(el('span', 'file-reviewed', '✓'));
    list.appendChild(li);
  }
  box.appendChild(list);
  return box;
}

export function renderRestored(entry: RestoredEntry, post: Post): HTMLElement {
  const box = el('div', `restored level-${entry.level}`);
  box.appendChild(el('span', 'restored-text', entry.text));
  if (entry.redoId && !entry.redone)
    box.appendChild(
      button('Redo', 'secondary small redo', () => post({ type: 'redo', id: entry.id }), 'Undo this restore'),
    );
  return box;
}

/** A file tool's diff (from its result, else from its input) appended to its card; `+N −M` in the summary. */
export function decorateTool(details: HTMLElement, entry: ToolEntry): void {
  let input: unknown = entry.input;
  try {
    input = JSON.parse(entry.input);
  } catch {
    /* shown as text */
  }
  const counted = entry.counts ?? entry.approval?.card.preview?.total;
  const view = toolDiff(entry.name, input, entry.output, entry.diff, counted);
  if (!view) return;
  if (view.counts) details.querySelector('summary')?.appendChild(counts(view.counts));
  const pre = el('pre', 'tool-diff');
  for (const line of view.lines) pre.appendChild(el('span', `diff-line diff-${line.kind}`, `${line.text}\n`));
  const output = details.querySelector('.tool-output');
  if (view.source === 'output' && output) {
    output.replaceWith(pre);
    return;
  } // the result is the diff: colour it
  details.appendChild(
    el('div', 'label', view.source === 'diff' ? 'Diff' : entry.status === 'running' ? 'Requested change' : 'Change'),
  );
  details.appendChild(pre);
}
