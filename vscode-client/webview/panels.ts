// The panels around the transcript: the header (model, agent) and the setup card, the task list, the
// queue of prompts waiting for the running turn, and the busy line.
import type { PanelInfo } from '../src/shared/webviewProtocol';
import type { QueuedChat, TodosPayload } from '../src/shared/protocol';
import { $, el, post } from './dom';
import { queueView } from './queue';
import { taskListNodes } from './todos';

const stopButton = $<HTMLButtonElement>('stop');
const status = $<HTMLElement>('status');
const todosPanel = $<HTMLElement>('todos');
const queuePanel = $<HTMLElement>('queue');
/** A turn is running: Esc and Stop cancel it. */
export let busy = false;

export function setBusy(value: boolean): void {
  busy = value;
  stopButton.hidden = !value;
  status.textContent = value ? 'Working… (Esc to stop; new messages queue)' : '';
  document.body.classList.toggle('busy', value);
}

export function renderQueue(queue: QueuedChat[]): void {
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

export function renderTodos(todos: TodosPayload | undefined): void {
  const nodes = todos ? taskListNodes(todos) : [];
  todosPanel.replaceChildren(...nodes);
  todosPanel.hidden = nodes.length === 0;
}

// the model and agent variant, always visible; the welcome while nothing is configured
const welcome = $<HTMLElement>('welcome');
let setupForced = false;
export function renderInfo(info: PanelInfo): void {
  $<HTMLButtonElement>('model').textContent = info.model;
  $<HTMLButtonElement>('agent').textContent = info.agent;
  welcome.hidden = !info.setup.show && !setupForced;
  const base = $<HTMLInputElement>('setup-base-url');
  const model = $<HTMLInputElement>('setup-model');
  if (!base.value) base.value = info.setup.baseUrl;
  if (!model.value) model.value = info.setup.model;
  $<HTMLButtonElement>('setup-key').textContent = info.setup.hasKey ? 'Change API key…' : 'Set API key…';
}
/** The host asks for the setup card (Shiro: Set up the model endpoint): shown until a test succeeds. */
export function showSetup(): void {
  setupForced = true;
  welcome.hidden = false;
  $<HTMLInputElement>('setup-base-url').focus();
}

export function showSetupResult(ok: boolean, text: string): void {
  const result = $<HTMLElement>('setup-result');
  result.textContent = text;
  result.className = `setup-result ${ok ? 'ok' : 'error'}`;
  if (ok) setupForced = false;
}

export function startPanels(): void {
  $<HTMLButtonElement>('model').addEventListener('click', () => post({ type: 'pickModel' }));
  $<HTMLButtonElement>('agent').addEventListener('click', () => post({ type: 'pickAgent' }));
  $<HTMLButtonElement>('setup-key').addEventListener('click', () => post({ type: 'setApiKey' }));
  $<HTMLButtonElement>('setup-detect').addEventListener('click', () => {
    $<HTMLElement>('setup-result').textContent = 'Looking for local model servers…';
    post({ type: 'detectLocal' });
  });
  $<HTMLButtonElement>('setup-test').addEventListener('click', () => {
    $<HTMLElement>('setup-result').textContent = 'Testing…';
    post({
      type: 'setup',
      baseUrl: $<HTMLInputElement>('setup-base-url').value.trim(),
      model: $<HTMLInputElement>('setup-model').value.trim(),
    });
  });
  stopButton.addEventListener('click', () => post({ type: 'cancel' }));
}
