// The chat panel. It renders what the extension host sends (the host owns the state, so a re-created
// webview is redrawn from the host) and posts the user's actions back.
import type { ChatEntry, ChatState } from '../src/chatModel';
import { PromptHistory } from '../src/history';
import type { QueuedChat, TodosPayload } from '../src/protocol';
import { queueView } from '../src/queue';
import type { HostMessage, WebviewMessage } from '../src/webviewProtocol';
import { createSanitizer, renderMarkdown } from './markdown';
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
let busy = false;

const post = (m: WebviewMessage): void => vscode.postMessage(m);

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function markdownInto(target: HTMLElement, text: string): void {
  target.innerHTML = renderMarkdown(text, purify);
  for (const pre of Array.from(target.querySelectorAll('pre'))) {
    const button = el('button', 'copy', 'Copy');
    button.type = 'button';
    button.title = 'Copy code';
    button.addEventListener('click', () => {
      post({ type: 'copy', text: pre.querySelector('code')?.textContent ?? pre.textContent ?? '' });
      button.textContent = 'Copied';
      setTimeout(() => { button.textContent = 'Copy'; }, 1200);
    });
    pre.classList.add('has-copy');
    pre.appendChild(button);
  }
}

function renderEntry(entry: ChatEntry): HTMLElement {
  const root = el('div', `entry ${entry.kind}`);
  root.dataset.id = entry.id;
  root.dataset.kind = entry.kind;
  switch (entry.kind) {
    case 'user': root.appendChild(el('div', 'bubble', entry.text)); decorateUser(root, entry, post); break;
    case 'assistant': {
      const body = el('div', 'markdown');
      markdownInto(body, entry.text);
      root.appendChild(body);
      if (entry.streaming) root.classList.add('streaming');
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
      const details = el('details', `tool status-${entry.status}`);
      const summary = el('summary');
      summary.appendChild(el('span', 'tool-name', entry.name));
      summary.appendChild(el('span', 'tool-status', entry.status));
      details.appendChild(summary);
      if (entry.input) { details.appendChild(el('div', 'label', 'Input')); details.appendChild(el('pre', 'tool-input', entry.input)); }
      if (entry.output) { details.appendChild(el('div', 'label', entry.status === 'error' ? 'Error' : 'Result')); details.appendChild(el('pre', 'tool-output', entry.output)); }
      decorateTool(details, entry);
      root.appendChild(details);
      break;
    }
    case 'notice': {
      root.classList.add(`level-${entry.level}`);
      const body = el('div', 'markdown');
      markdownInto(body, entry.text);
      root.appendChild(body);
      break;
    }
    case 'approval': root.appendChild(renderApproval(entry)); break;
    case 'changes': root.appendChild(renderChanges(entry, post)); break;
    case 'restored': root.appendChild(renderRestored(entry, post)); break;
  }
  return root;
}

function renderApproval(entry: Extract<ChatEntry, { kind: 'approval' }>): HTMLElement {
  const card = el('div', 'approval-card');
  card.appendChild(el('div', 'approval-title', entry.card.title));
  if (entry.card.matched) card.appendChild(el('div', 'approval-matched', entry.card.matched));
  if (entry.card.warning) card.appendChild(el('div', 'approval-warning', entry.card.warning));
  card.appendChild(el('pre', 'approval-input', entry.card.input));
  if (entry.decision) {
    const label = entry.expired ? 'Denied (no answer in time)'
      : entry.decision === 'deny' ? 'Denied' : entry.decision === 'always' ? 'Always allowed' : 'Allowed once';
    card.appendChild(el('div', `approval-decision decision-${entry.decision}`, label));
    decorateApproval(card, entry, post);
    return card;
  }
  const buttons = el('div', 'approval-buttons');
  entry.card.buttons.forEach((b, i) => {
    const button = el('button', i === 0 ? 'primary' : 'secondary', b.label);
    button.type = 'button';
    button.dataset.decision = b.decision;
    button.addEventListener('click', () => post({
      type: 'approve', id: entry.id, decision: b.decision, reason: b.decision === 'deny' ? denyReason(card) : undefined,
    }));
    buttons.appendChild(button);
  });
  card.appendChild(buttons);
  decorateApproval(card, entry, post);
  return card;
}

function nearBottom(): boolean {
  return transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 80;
}

function upsert(entry: ChatEntry): void {
  const old = nodes.get(entry.id);
  // follow the stream when the reader is at the bottom; always show a new prompt or an approval that needs an answer
  const stick = nearBottom() || (!old && (entry.kind === 'user' || entry.kind === 'approval'));
  const fresh = renderEntry(entry);
  if (old) {
    const openDetails = old.querySelector('details')?.open;
    if (openDetails !== undefined) fresh.querySelector('details')?.toggleAttribute('open', openDetails);
    old.replaceWith(fresh);
  } else transcript.appendChild(fresh);
  nodes.set(entry.id, fresh);
  if (stick) transcript.scrollTop = transcript.scrollHeight;
}

let frame = 0;
function schedule(entry: ChatEntry): void {
  dirty.set(entry.id, entry);
  if (!frame) frame = requestAnimationFrame(flush);
}
function flush(): void {
  frame = 0;
  for (const e of dirty.values()) upsert(e);
  dirty.clear();
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
  todosPanel.replaceChildren();
  todosPanel.hidden = !todos || todos.todos.length === 0;
  if (!todos || todosPanel.hidden) return;
  const { done, total, blocked } = todos.progress;
  const head = el('div', 'todos-head');
  head.appendChild(el('span', 'todos-title', 'Tasks'));
  head.appendChild(el('span', 'todos-count', `${done}/${total}${blocked ? `  ${blocked} blocked` : ''}`));
  todosPanel.appendChild(head);
  const bar = el('div', 'progress');
  bar.setAttribute('role', 'progressbar');
  bar.setAttribute('aria-valuemin', '0');
  bar.setAttribute('aria-valuemax', String(total));
  bar.setAttribute('aria-valuenow', String(done));
  bar.title = todos.rendered.split('\n')[0] ?? '';
  const fill = el('div', 'progress-fill');
  fill.style.width = `${total ? Math.round((100 * done) / total) : 0}%`;
  bar.appendChild(fill);
  todosPanel.appendChild(bar);
  const list = el('ul', 'todos-list');
  for (const t of todos.todos) {
    const done = t.status === 'done' || t.status === 'completed';
    const li = el('li', `todo status-${done ? 'done' : t.status}`);
    li.appendChild(el('span', 'todo-mark', done ? '✓' : t.status === 'in_progress' ? '▶' : t.status === 'blocked' ? '!' : '○'));
    li.appendChild(el('span', 'todo-content', t.content));
    if (t.note) li.appendChild(el('span', 'todo-note', ` (${t.note})`));
    list.appendChild(li);
  }
  todosPanel.appendChild(list);
}

function renderState(state: ChatState, prompts: string[]): void {
  nodes.clear();
  dirty.clear();
  transcript.replaceChildren();
  for (const entry of state.entries) upsert(entry);
  transcript.scrollTop = transcript.scrollHeight;
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
  }
});

function send(): void {
  const text = prompt.value;
  if (!text.trim()) return;
  history.push(text);
  post({ type: 'send', text });
  prompt.value = '';
  saveDraft();
}

function saveDraft(): void { vscode.setState({ draft: prompt.value }); }

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

const saved = vscode.getState() as { draft?: string } | undefined;
if (saved?.draft) prompt.value = saved.draft;
post({ type: 'ready' });
