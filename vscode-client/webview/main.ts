// The chat panel. It renders what the extension host sends (the host owns the state, so a re-created
// webview is redrawn from the host) and posts the user's actions back.
import type { ApprovalEntry, ChatEntry, ChatState, CompactionEntry } from '../src/chat/chatModel';
import { PromptHistory } from './history';
import type { QueuedChat, TodosPayload } from '../src/shared/protocol';
import { queueView } from './queue';
import { TranscriptWindow } from './transcriptWindow';
import type { PanelInfo } from '../src/setup/setup';
import type { Attachment } from '../src/chat/attachments';
import { activeToken, applyPick, rankCandidates } from '../src/chat/mentions';
import type { ActiveToken, Candidate } from '../src/chat/mentions';
import { SLASH_COMMANDS } from '../src/chat/slash';
import { nextTick, retryLabel } from '../src/chat/retryCountdown';
import type { RetryWait } from '../src/chat/retryCountdown';
import type { HostMessage, WebviewMessage } from '../src/shared/webviewProtocol';
import { codeLanguage, createSanitizer, highlightCode, isWorkspaceLink, renderMarkdown } from './markdown';
import { taskListNodes } from './todos';
import { decorateApproval, decorateTool, decorateUser, denyReason, renderChanges, renderRestored } from './changes';

interface VsCodeApi { postMessage(m: WebviewMessage): void; getState(): unknown; setState(s: unknown): void }
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const purify = createSanitizer(window);
const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const transcript = $<HTMLElement>('transcript');
const prompt = $<HTMLTextAreaElement>('prompt');
const stopButton = $<HTMLButtonElement>('stop');
const status = $<HTMLElement>('status');
const todosPanel = $<HTMLElement>('todos');
const queuePanel = $<HTMLElement>('queue');
const history = new PromptHistory();
const nodes = new Map<string, HTMLElement>();
const dirty = new Map<string, ChatEntry>();
/** Tool rows the reader opened or closed by hand: redraws keep that. */
const toggled = new Map<string, boolean>();
let busy = false;

const post = (m: WebviewMessage): void => vscode.postMessage(m);

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function codeButton(label: string, title: string, onClick: (button: HTMLButtonElement) => void): HTMLButtonElement {
  const button = el('button', 'code-action', label);
  button.type = 'button';
  button.title = title;
  button.addEventListener('click', () => onClick(button));
  return button;
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
    head.appendChild(codeButton('Copy', 'Copy code', button => {
      post({ type: 'copy', text: source() });
      button.textContent = 'Copied';
      setTimeout(() => { button.textContent = 'Copy'; }, 1200);
    }));
    head.appendChild(codeButton('Insert', 'Insert at the cursor in the editor', () => post({ type: 'insertCode', text: source() })));
    head.appendChild(codeButton('New file', 'Open in a new untitled editor', () => post({ type: 'newFile', text: source(), language })));
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

function renderEntry(entry: ChatEntry): HTMLElement {
  const root = el('div', `entry ${entry.kind}`);
  root.dataset.id = entry.id;
  root.dataset.kind = entry.kind;
  switch (entry.kind) {
    case 'user': {
      if (entry.attachments?.length) {
        const chips = el('div', 'chips sent');
        for (const label of entry.attachments) chips.appendChild(el('span', 'chip', label));
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
      if (entry.incomplete) root.appendChild(el('div', 'incomplete', 'Incomplete: the answer was cut off by an error.'));
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
      if (entry.fromText) summary.appendChild(el('span', 'tool-origin', "read from the model's text"));
      summary.appendChild(el('span', 'tool-status', pending ? 'waiting for your answer' : entry.status));
      details.appendChild(summary);
      // the pending card already shows the input: once is enough
      if (entry.input && !pending) { details.appendChild(el('div', 'label', 'Input')); details.appendChild(el('pre', 'tool-input', entry.input)); }
      if (entry.output) {
        const running = entry.status === 'running';
        details.appendChild(el('div', 'label', entry.status === 'error' ? 'Error' : running ? 'Output (live)' : 'Result'));
        details.appendChild(el('pre', `tool-output${running ? ' live' : ''}`, running ? tail(entry.output) : entry.output));
      }
      // live output is shown as it comes; a finished tool folds (unless the reader opened or closed it)
      const auto = entry.status === 'running' && entry.output.length > 0;
      details.open = toggled.get(entry.id) ?? auto;
      decorateTool(details, entry);
      details.addEventListener('toggle', () => {
        if (details.open === auto) toggled.delete(entry.id); else toggled.set(entry.id, details.open);
      });
      root.appendChild(details);
      break;
    }
    case 'notice': {
      root.classList.add(`level-${entry.level}`);
      if (entry.wait) root.appendChild(countdown(entry.wait));
      if (!entry.todos) {  // a task list draws its own "Tasks" head
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
    case 'compaction': root.appendChild(renderCompaction(entry)); break;
    case 'approval': root.appendChild(renderApproval(entry)); break;
    case 'changes': root.appendChild(renderChanges(entry, post)); break;
    case 'restored': root.appendChild(renderRestored(entry, post)); break;
  }
  return root;
}

const COMPACTION_LABEL: Record<CompactionEntry['state'], (messages: number) => string> = {
  summarizing: n => `Compacting: summarising ${n} message${n === 1 ? '' : 's'}…`,
  failed: () => 'Compaction failed: the model still sees the whole conversation.',
  active: n => n > 0
    ? `Compacted: the model sees a summary in place of the ${n} message${n === 1 ? '' : 's'} above`
    : 'Compacted by an older version: the model sees a summary of the earlier conversation',
  undone: () => 'Compaction undone: the model sees the messages above again',
};

/** A divider at a compaction point: the summary and what left the model's view can be opened. */
function renderCompaction(entry: CompactionEntry): HTMLElement {
  const box = el('div', `compaction state-${entry.state}`);
  box.setAttribute('role', 'separator');
  const line = el('div', 'compaction-line');
  line.appendChild(el('span', 'compaction-label', COMPACTION_LABEL[entry.state](entry.messages)));
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
    summary.appendChild(el('summary', undefined, 'Summary the model sees'));
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
    const label = entry.expired ? 'Denied (no answer in time)'
      : entry.decision === 'deny' ? 'Denied' : entry.decision === 'always' ? 'Allowed for this session' : 'Allowed once';
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
      post({ type: 'approve', id: entry.id, decision: b.decision, reason: b.decision === 'deny' ? denyReason(card) : undefined });
      prompt.focus();  // answered: the keyboard goes back to the prompt (not to the body)
    });
    buttons.appendChild(button);
  });
  card.appendChild(buttons);
  decorateApproval(card, entry, post);
  return card;
}

function nearBottom(): boolean {
  return transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 80;
}

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
  transcript.scrollTop += transcript.scrollHeight - before;  // keep what the reader was looking at in place
}

// scrolled to the top: draw the next older page (re-observing re-checks, in case the page did not fill the view)
const topWatch = new IntersectionObserver(seen => {
  if (!seen.some(s => s.isIntersecting) || window_.hidden === 0) return;
  showEarlier();
  topWatch.unobserve(earlier);
  requestAnimationFrame(() => topWatch.observe(earlier));
}, { root: transcript, rootMargin: '200px 0px 0px 0px' });

let frame = 0;
function schedule(entry: ChatEntry): void {
  dirty.set(entry.id, entry);
  if (!frame) frame = requestAnimationFrame(flush);
}

/** Apply every change of this frame: one layout read before the writes, one append, one scroll. */
function flush(): void {
  frame = 0;
  let stick = nearBottom();
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
      if (entry.kind === 'tool' && entry.approval && !entry.approval.decision) stick = true;  // a question to answer
    }
  }
  dirty.clear();
  transcript.appendChild(fragment);
  if (stick) stickToBottom();
}

/** Scroll to the end, and again next frame: off-screen entries only get their real height once drawn. */
function stickToBottom(): void {
  transcript.scrollTop = transcript.scrollHeight;
  requestAnimationFrame(() => { transcript.scrollTop = transcript.scrollHeight; });
}

function setBusy(value: boolean): void {
  busy = value;
  stopButton.hidden = !value;
  status.textContent = value ? 'Working… (Esc to stop; new messages queue)' : '';
  document.body.classList.toggle('busy', value);
}

function renderQueue(queue: QueuedChat[]): void {
  const view = queueView(queue);
  queuePanel.hidden = !view.visible;
  queuePanel.replaceChildren();
  if (!view.visible) return;
  const head = el('div', 'queue-head');
  head.appendChild(el('span', 'queue-title', view.title));
  const clear = el('button', 'secondary', 'Clear queue');
  clear.type = 'button';
  clear.id = 'clear-queue';
  clear.addEventListener('click', () => post({ type: 'clearQueue' }));
  head.appendChild(clear);
  queuePanel.appendChild(head);
  const list = el('ol', 'queue-list');
  for (const item of view.items) list.appendChild(el('li', undefined, item.label.replace(/^\d+\.\s/, '')));
  queuePanel.appendChild(list);
}

function renderTodos(todos: TodosPayload | undefined): void {
  const nodes = todos ? taskListNodes(todos) : [];
  todosPanel.replaceChildren(...nodes);
  todosPanel.hidden = nodes.length === 0;
}

function renderState(state: ChatState, prompts: string[]): void {
  if (frame) { cancelAnimationFrame(frame); frame = 0; }
  nodes.clear();
  dirty.clear();
  const fragment = document.createDocumentFragment();
  for (const entry of window_.reset(state.entries)) fragment.appendChild(draw(entry));
  transcript.replaceChildren(earlier, fragment);
  updateEarlier();
  stickToBottom();
  setBusy(state.busy);
  renderQueue(state.queue);
  renderTodos(state.todos);
  history.replace(prompts);
}

window.addEventListener('message', (event: MessageEvent<HostMessage>) => {
  const m = event.data;
  switch (m.type) {
    case 'state': renderState(m.state, m.history); break;
    case 'entry': schedule(m.entry); break;
    case 'busy': setBusy(m.busy); break;
    case 'queue': renderQueue(m.queue); break;
    case 'todos': renderTodos(m.todos); break;
    case 'history': history.replace(m.prompts); break;
    case 'focus': prompt.focus(); break;
    case 'attach': attach(m.attachment); break;
    case 'mentionCandidates': if (mentionPool) { mentionPool = m.items; updateSuggest(); } break;
    case 'info': renderInfo(m.info); break;
    case 'showSetup': setupForced = true; welcome.hidden = false; $<HTMLInputElement>('setup-base-url').focus(); break;
    case 'setupResult': {
      const result = $<HTMLElement>('setup-result');
      result.textContent = m.text;
      result.className = `setup-result ${m.ok ? 'ok' : 'error'}`;
      if (m.ok) setupForced = false;
      break;
    }
  }
});

// the model and agent variant, always visible; the welcome while nothing is configured
const welcome = $<HTMLElement>('welcome');
let setupForced = false;
function renderInfo(info: PanelInfo): void {
  $<HTMLButtonElement>('model').textContent = info.model;
  $<HTMLButtonElement>('agent').textContent = info.agent;
  welcome.hidden = !info.setup.show && !setupForced;
  const base = $<HTMLInputElement>('setup-base-url');
  const model = $<HTMLInputElement>('setup-model');
  if (!base.value) base.value = info.setup.baseUrl;
  if (!model.value) model.value = info.setup.model;
  $<HTMLButtonElement>('setup-key').textContent = info.setup.hasKey ? 'Change API key…' : 'Set API key…';
}
$<HTMLButtonElement>('model').addEventListener('click', () => post({ type: 'pickModel' }));
$<HTMLButtonElement>('agent').addEventListener('click', () => post({ type: 'pickAgent' }));
$<HTMLButtonElement>('setup-key').addEventListener('click', () => post({ type: 'setApiKey' }));
$<HTMLButtonElement>('setup-detect').addEventListener('click', () => {
  $<HTMLElement>('setup-result').textContent = 'Looking for local model servers…';
  post({ type: 'detectLocal' });
});
$<HTMLButtonElement>('setup-test').addEventListener('click', () => {
  $<HTMLElement>('setup-result').textContent = 'Testing…';
  post({ type: 'setup', baseUrl: $<HTMLInputElement>('setup-base-url').value.trim(), model: $<HTMLInputElement>('setup-model').value.trim() });
});

// context chips waiting in the composer (sent with the next prompt)
const chipsBox = $<HTMLElement>('chips');
let attachments: Attachment[] = [];
function renderChips(): void {
  chipsBox.replaceChildren();
  chipsBox.hidden = attachments.length === 0;
  attachments.forEach((a, i) => {
    const chip = el('span', 'chip');
    chip.title = a.text.length > 400 ? `${a.text.slice(0, 400)}…` : a.text;
    chip.appendChild(el('span', 'chip-label', a.label));
    const remove = el('button', 'chip-remove', '×');
    remove.type = 'button';
    remove.title = `Remove ${a.label}`;
    remove.setAttribute('aria-label', `Remove ${a.label}`);
    remove.addEventListener('click', () => { attachments.splice(i, 1); renderChips(); saveDraft(); prompt.focus(); });
    chip.appendChild(remove);
    chipsBox.appendChild(chip);
  });
}
function attach(a: Attachment): void {
  if (!attachments.some(x => x.label === a.label && x.text === a.text)) attachments.push(a);
  renderChips();
  saveDraft();
}

// `/` completion and `@` mentions: a list above the prompt; Up/Down move in it, Enter/Tab pick, Esc closes
const suggestBox = $<HTMLElement>('suggest');
const SLASH: Candidate[] = Object.entries(SLASH_COMMANDS).map(([name, help]) => ({ kind: 'command', value: name, label: `/${name}`, detail: help.replace(/`/g, '') }));
let suggestToken: ActiveToken | undefined;
let suggestItems: Candidate[] = [];
let suggestActive = 0;
let mentionPool: Candidate[] | undefined;

function closeSuggest(): void {
  suggestToken = undefined;
  suggestItems = [];
  suggestBox.hidden = true;
  mentionPool = undefined;  // the next @ asks the host again (files change)
}

function updateSuggest(): void {
  const token = prompt.selectionStart === prompt.selectionEnd ? activeToken(prompt.value, prompt.selectionStart) : undefined;
  if (!token) { closeSuggest(); return; }
  if (token.trigger === '@' && !mentionPool) { mentionPool = []; post({ type: 'mentions' }); }
  suggestToken = token;
  suggestItems = rankCandidates(token.query, token.trigger === '/' ? SLASH : mentionPool ?? []);
  suggestActive = Math.min(suggestActive, Math.max(0, suggestItems.length - 1));
  renderSuggest();
}

function renderSuggest(): void {
  suggestBox.replaceChildren();
  suggestBox.hidden = suggestItems.length === 0;
  suggestItems.forEach((c, i) => {
    const row = el('div', `suggest-item kind-${c.kind}${i === suggestActive ? ' active' : ''}`);
    row.setAttribute('role', 'option');
    row.setAttribute('aria-selected', String(i === suggestActive));
    row.appendChild(el('span', 'suggest-label', c.label));
    if (c.detail) row.appendChild(el('span', 'suggest-detail', c.detail));
    row.addEventListener('mousedown', e => { e.preventDefault(); pickSuggestion(c); });
    suggestBox.appendChild(row);
  });
}

function pickSuggestion(c: Candidate): void {
  if (!suggestToken) return;
  const next = applyPick(prompt.value, suggestToken, c);
  prompt.value = next.text;
  prompt.setSelectionRange(next.caret, next.caret);
  if (c.kind !== 'command') post({ type: 'mention', kind: c.kind, value: c.value });
  closeSuggest();
  saveDraft();
  prompt.focus();
}

prompt.addEventListener('keydown', e => {
  if (suggestBox.hidden || !suggestItems.length) return;
  let handled = true;
  if (e.key === 'ArrowDown') suggestActive = (suggestActive + 1) % suggestItems.length;
  else if (e.key === 'ArrowUp') suggestActive = (suggestActive - 1 + suggestItems.length) % suggestItems.length;
  else if ((e.key === 'Enter' || e.key === 'Tab') && !e.shiftKey && !e.isComposing) {
    const item = suggestItems[suggestActive];
    // a command typed out in full: Enter sends it (Tab still completes)
    if (e.key === 'Enter' && suggestToken?.trigger === '/' && item.value === suggestToken.query) { closeSuggest(); return; }
    pickSuggestion(item);
  }
  else if (e.key === 'Escape') closeSuggest();
  else handled = false;
  if (!handled) return;
  e.preventDefault();
  e.stopImmediatePropagation();
  if (!suggestBox.hidden) renderSuggest();
}, { capture: true });
prompt.addEventListener('input', () => { suggestActive = 0; updateSuggest(); });
prompt.addEventListener('blur', () => setTimeout(() => { if (document.activeElement !== prompt) closeSuggest(); }, 150));

function send(): void {
  const text = prompt.value;
  if (!text.trim()) return;
  history.push(text);
  post({ type: 'send', text, ...(attachments.length ? { attachments } : {}) });
  prompt.value = '';
  attachments = [];
  renderChips();
  saveDraft();
}

function saveDraft(): void { vscode.setState({ draft: prompt.value, attachments }); }

const caretOnFirstLine = (): boolean => !prompt.value.slice(0, prompt.selectionStart).includes('\n');
const caretOnLastLine = (): boolean => !prompt.value.slice(prompt.selectionEnd).includes('\n');

prompt.addEventListener('keydown', e => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); return; }
  if (e.key === 'ArrowUp' && !e.shiftKey && caretOnFirstLine()) {
    const older = history.up(prompt.value);
    if (older !== undefined) { e.preventDefault(); prompt.value = older; prompt.setSelectionRange(older.length, older.length); }
  } else if (e.key === 'ArrowDown' && !e.shiftKey && caretOnLastLine()) {
    const newer = history.down();
    if (newer !== undefined) { e.preventDefault(); prompt.value = newer; prompt.setSelectionRange(newer.length, newer.length); }
  }
});
prompt.addEventListener('input', saveDraft);
document.addEventListener('keydown', e => {
  if (e.key === 'Escape' && busy) { e.preventDefault(); post({ type: 'cancel' }); }
});
$<HTMLFormElement>('composer').addEventListener('submit', e => { e.preventDefault(); send(); });
stopButton.addEventListener('click', () => post({ type: 'cancel' }));
// a relative link in an answer (`[src/calc.py](src/calc.py)`) opens that workspace file
transcript.addEventListener('click', e => {
  const link = (e.target as Element | null)?.closest?.('.markdown a[href]');
  const href = link?.getAttribute('href') ?? '';
  if (link && isWorkspaceLink(href)) { e.preventDefault(); post({ type: 'openFile', href }); }
});

// "Focus on Chat View" (or a click on the view's title) focuses the webview: the prompt takes the keys
window.addEventListener('focus', () => {
  if (document.activeElement === document.body || document.activeElement === null) prompt.focus();
});

const saved = vscode.getState() as { draft?: string; attachments?: Attachment[] } | undefined;
if (saved?.draft) prompt.value = saved.draft;
if (saved?.attachments?.length) { attachments = saved.attachments; renderChips(); }
transcript.appendChild(earlier);
updateEarlier();
topWatch.observe(earlier);
post({ type: 'ready' });
