// One transcript entry as DOM: user turns, answers (sanitized markdown), reasoning, tool rows, notices,
// compaction dividers, approval cards and the review blocks (changes.ts). Builds nodes; owns no layout.
import type { ApprovalEntry, ChatEntry, CompactionEntry } from '../src/shared/webviewProtocol';
import { nextTick, retryLabel } from '../src/shared/retryCountdown';
import type { RetryWait } from '../src/shared/retryCountdown';
import { decorateApproval, decorateTool, decorateUser, denyReason, renderChanges, renderRestored } from './changes';
import { $, el, post } from './dom';
import { codeLanguage, createSanitizer, highlightCode, renderMarkdown } from './markdown';
import { taskListNodes } from './todos';

const purify = createSanitizer(window);
/** Tool rows the reader opened or closed by hand: redraws keep that. */
const toggled = new Map<string, boolean>();

function codeButton(label: string, title: string, onClick: (button: HTMLButtonElement) => void): HTMLButtonElement {
  const button = el('button', 'code-action', label);
  button.type = 'button';
  button.title = title;
  button.addEventListener('click', () => onClick(button));
  return button;
}

/** An image sent with a prompt: its thumbnail and name (only the name when the server no longer keeps it). */
function sentImage(name: string, thumbnail: string | undefined): HTMLElement {
  const chip = el('span', 'chip chip-image');
  chip.title = name;
  if (thumbnail?.startsWith('data:image/')) {
    const thumb = el('img', 'chip-thumb');
    thumb.src = thumbnail;
    thumb.alt = name;
    chip.appendChild(thumb);
  }
  chip.appendChild(el('span', 'chip-label', name));
  return chip;
}

/** Model markdown, sanitized; each code block gets a head with its language and Copy / Insert / New file. */
function markdownInto(target: HTMLElement, text: string): void {
  target.innerHTML = renderMarkdown(text, purify);
  highlightCode(target);
  for (const pre of Array.from(target.querySelectorAll('pre'))) {
    const code = pre.querySelector('code');
    const source = (): string => code?.textContent ?? pre.textContent ?? '';
    const language = code ? codeLanguage(code) : '';
    const block = el('div', 'code-block');
    const head = el('div', 'code-head');
    head.appendChild(el('span', 'code-lang', language || 'text'));
    head.appendChild(
      codeButton('Copy', 'Copy code', button => {
        post({ type: 'copy', text: source() });
        button.textContent = 'Copied';
        setTimeout(() => {
          button.textContent = 'Copy';
        }, 1200);
      }),
    );
    head.appendChild(
      codeButton('Insert', 'Insert at the cursor in the editor', () => post({ type: 'insertCode', text: source() })),
    );
    head.appendChild(
      codeButton('New file', 'Open in a new untitled editor', () =>
        post({ type: 'newFile', text: source(), language }),
      ),
    );
    pre.replaceWith(block);
    block.append(head, pre);
  }
}

/** "Retrying in 3 s… (attempt 2 of 4)", redrawn each second until the wait is over. */
function countdown(wait: RetryWait): HTMLElement {
  const line = el('div', 'retry-countdown', retryLabel(wait, Date.now()));
  line.setAttribute('role', 'status');
  const tick = (): void => {
    line.textContent = retryLabel(wait, Date.now());
    const next = nextTick(wait, Date.now());
    if (next !== undefined && (line.isConnected || Date.now() < wait.until)) setTimeout(tick, next);
  };
  const first = nextTick(wait, Date.now());
  if (first !== undefined) setTimeout(tick, first);
  return line;
}

export function renderEntry(entry: ChatEntry): HTMLElement {
  const root = el('div', `entry ${entry.kind}`);
  root.dataset.id = entry.id;
  root.dataset.kind = entry.kind;
  switch (entry.kind) {
    case 'user': {
      if (entry.attachments?.length || entry.images?.length) {
        const chips = el('div', 'chips sent');
        for (const image of entry.images ?? []) chips.appendChild(sentImage(image.name, image.thumbnail));
        for (const label of entry.attachments ?? []) chips.appendChild(el('span', 'chip', label));
        root.appendChild(chips);
      }
      root.appendChild(el('div', 'bubble', entry.text));
      decorateUser(root, entry, post);
      break;
    }
    case 'assistant': {
      const body = el('div', 'markdown');
      markdownInto(body, entry.text);
      root.appendChild(body);
      if (entry.streaming) root.classList.add('streaming');
      if (entry.incomplete)
        root.appendChild(el('div', 'incomplete', 'Incomplete: the answer was cut off by an error.'));
      break;
    }
    case 'reasoning': {
      const details = el('details', 'reasoning');
      details.appendChild(el('summary', undefined, entry.streaming ? 'Thinking…' : 'Reasoning'));
      details.appendChild(el('div', 'reasoning-text', entry.text));
      root.appendChild(details);
      break;
    }
    case 'tool': {
      const pending = entry.approval !== undefined && !entry.approval.decision;
      if (entry.approval) root.appendChild(renderApproval(entry.approval, true));
      const details = el('details', `tool status-${entry.status}`);
      const summary = el('summary');
      summary.appendChild(el('span', 'tool-name', entry.name));
      if (entry.byShiro) summary.appendChild(el('span', 'tool-origin by-shiro', 'run by Shiro'));
      else if (entry.fromText) summary.appendChild(el('span', 'tool-origin', "read from the model's text"));
      summary.appendChild(el('span', 'tool-status', pending ? 'waiting for your answer' : entry.status));
      details.appendChild(summary);
      // the pending card already shows the input: once is enough
      if (entry.input && !pending) {
        details.appendChild(el('div', 'label', 'Input'));
        details.appendChild(el('pre', 'tool-input', entry.input));
      }
      if (entry.output) {
        const running = entry.status === 'running';
        details.appendChild(
          el('div', 'label', entry.status === 'error' ? 'Error' : running ? 'Output (live)' : 'Result'),
        );
        details.appendChild(
          el('pre', `tool-output${running ? ' live' : ''}`, running ? tail(entry.output) : entry.output),
        );
      }
      // live output is shown as it comes; a finished tool folds (unless the reader opened or closed it)
      const auto = entry.status === 'running' && entry.output.length > 0;
      details.open = toggled.get(entry.id) ?? auto;
      decorateTool(details, entry);
      details.addEventListener('toggle', () => {
        if (details.open === auto) toggled.delete(entry.id);
        else toggled.set(entry.id, details.open);
      });
      root.appendChild(details);
      break;
    }
    case 'notice': {
      root.classList.add(`level-${entry.level}`);
      if (entry.wait) root.appendChild(countdown(entry.wait));
      if (!entry.todos) {
        // a task list draws its own "Tasks" head
        const body = el('div', 'markdown');
        markdownInto(body, entry.text);
        root.appendChild(body);
      }
      if (entry.retry !== undefined) {
        const retry = el('button', 'retry secondary', 'Retry');
        retry.type = 'button';
        retry.title = 'Send the same prompt again';
        retry.addEventListener('click', () => post({ type: 'retry', id: entry.id }));
        root.appendChild(retry);
      }
      if (entry.sessions?.length) {
        const list = el('div', 'session-links');
        for (const s of entry.sessions) {
          const open = el('button', 'session-link secondary', s.label);
          open.type = 'button';
          open.title = 'Resume this session';
          open.addEventListener('click', () => post({ type: 'resume', id: s.id }));
          list.appendChild(open);
        }
        root.appendChild(list);
      }
      if (entry.todos) {
        const tasks = el('section', 'todos in-transcript');
        tasks.replaceChildren(...taskListNodes(entry.todos));
        root.appendChild(tasks);
      }
      break;
    }
    case 'compaction':
      root.appendChild(renderCompaction(entry));
      break;
    case 'approval':
      root.appendChild(renderApproval(entry));
      break;
    case 'changes':
      root.appendChild(renderChanges(entry, post));
      break;
    case 'restored':
      root.appendChild(renderRestored(entry, post));
      break;
  }
  return root;
}

const COMPACTION_LABEL: Record<CompactionEntry['state'], (messages: number) => string> = {
  summarizing: n => `Compacting: summarising ${n} message${n === 1 ? '' : 's'}…`,
  failed: () => 'Compaction failed: the model still sees the whole conversation.',
  active: n =>
    n > 0
      ? `Compacted: the model sees a summary in place of the ${n} message${n === 1 ? '' : 's'} above`
      : 'Compacted by an older version: the model sees a summary of the earlier conversation',
  undone: () => 'Compaction undone: the model sees the messages above again',
};

/** What a divider says: its state, whether the model sees its own summary or Shiro's digest (and why), and
 *  whether Shiro compacted on its own. */
function compactionLabel(entry: CompactionEntry): string {
  const n = entry.messages;
  let label = COMPACTION_LABEL[entry.state](n);
  if (entry.state !== 'active') return label;
  if (entry.digestReason)
    label =
      `Compacted: the model sees Shiro's digest in place of the ${n} message${n === 1 ? '' : 's'} above ` +
      `(the model's summary was not usable: ${entry.digestReason})`;
  else if (n > 0) label = label.replace('sees a summary', "sees the model's summary");
  return entry.auto ? `${label} (automatically: the conversation no longer fit the compaction threshold)` : label;
}

/** A divider at a compaction point: the summary and what left the model's view can be opened. */
function renderCompaction(entry: CompactionEntry): HTMLElement {
  const box = el('div', `compaction state-${entry.state}`);
  box.setAttribute('role', 'separator');
  const line = el('div', 'compaction-line');
  line.appendChild(el('span', 'compaction-label', compactionLabel(entry)));
  if (entry.state === 'active') {
    const undo = el('button', 'compaction-undo secondary', 'Undo compaction');
    undo.type = 'button';
    undo.title = 'Give the model the earlier messages again (if they still fit)';
    undo.addEventListener('click', () => post({ type: 'undoCompaction' }));
    line.appendChild(undo);
  }
  box.appendChild(line);
  if (entry.summary) {
    const summary = el('details', 'compaction-summary');
    summary.appendChild(
      el('summary', undefined, entry.digestReason ? "Shiro's digest the model sees" : 'Summary the model sees'),
    );
    const body = el('div', 'markdown');
    markdownInto(body, entry.summary);
    summary.appendChild(body);
    box.appendChild(summary);
  }
  if (entry.dropped.length) {
    const dropped = el('details', 'compaction-dropped');
    dropped.appendChild(el('summary', undefined, `Dropped from the model's view (${entry.dropped.length})`));
    const list = el('ul');
    for (const text of entry.dropped) list.appendChild(el('li', undefined, text));
    dropped.appendChild(list);
    box.appendChild(dropped);
  }
  return box;
}

/** The last lines of a running tool's output (a live view; the full text is there when it ends). */
function tail(text: string, lines = 40): string {
  const all = text.split('\n');
  return all.length > lines ? `…\n${all.slice(-lines).join('\n')}` : text;
}

function renderApproval(entry: ApprovalEntry, inTool = false): HTMLElement {
  const card = el('div', `approval-card${inTool ? ' in-tool' : ''}${entry.decision ? ' answered' : ''}`);
  card.appendChild(el('div', 'approval-title', entry.card.title));
  if (entry.decision) {
    // answered: one line (the input stays in the tool row below)
    const label = entry.expired
      ? 'Denied (no answer in time)'
      : entry.decision === 'deny'
        ? 'Denied'
        : entry.decision === 'always'
          ? 'Allowed for this session'
          : 'Allowed once';
    card.appendChild(el('div', `approval-decision decision-${entry.decision}`, label));
    if (!inTool) {
      const input = el('details', 'approval-input-folded');
      input.appendChild(el('summary', undefined, 'Input'));
      input.appendChild(el('pre', 'approval-input', entry.card.input));
      card.appendChild(input);
    }
    decorateApproval(card, entry, post);
    return card;
  }
  if (entry.card.matched) card.appendChild(el('div', 'approval-matched', entry.card.matched));
  if (entry.card.warning) card.appendChild(el('div', 'approval-warning', entry.card.warning));
  card.appendChild(el('pre', 'approval-input', entry.card.input));
  const buttons = el('div', 'approval-buttons');
  entry.card.buttons.forEach((b, i) => {
    const button = el('button', i === 0 ? 'primary' : 'secondary', b.label);
    button.type = 'button';
    button.dataset.decision = b.decision;
    button.addEventListener('click', () => {
      post({
        type: 'approve',
        id: entry.id,
        decision: b.decision,
        reason: b.decision === 'deny' ? denyReason(card) : undefined,
      });
      $<HTMLTextAreaElement>('prompt').focus(); // answered: the keyboard goes back to the prompt (not to the body)
    });
    buttons.appendChild(button);
  });
  card.appendChild(buttons);
  decorateApproval(card, entry, post);
  return card;
}
