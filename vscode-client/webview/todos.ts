// The task list as the panel draws it: a head with the count, a progress bar and one row per task.
// Used by the task panel above the prompt and by `/todos` in the transcript, so both read the same.
import type { TodosPayload } from '../src/shared/protocol';

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

const MARKS: Record<string, string> = { done: '✓', in_progress: '▶', blocked: '!' };

/** The task list's nodes, in order (nothing for an empty list). */
export function taskListNodes(todos: TodosPayload): HTMLElement[] {
  if (todos.todos.length === 0) return [];
  const { done, total, blocked } = todos.progress;
  const head = el('div', 'todos-head');
  head.appendChild(el('span', 'todos-title', 'Tasks'));
  head.appendChild(el('span', 'todos-count', `${done}/${total}${blocked ? `  ${blocked} blocked` : ''}`));
  const bar = el('div', 'progress');
  bar.setAttribute('role', 'progressbar');
  bar.setAttribute('aria-valuemin', '0');
  bar.setAttribute('aria-valuemax', String(total));
  bar.setAttribute('aria-valuenow', String(done));
  bar.title = todos.rendered.split('\n')[0] ?? '';
  const fill = el('div', 'progress-fill');
  fill.style.width = `${total ? Math.round((100 * done) / total) : 0}%`;
  bar.appendChild(fill);
  const list = el('ul', 'todos-list');
  for (const t of todos.todos) {
    const li = el('li', `todo status-${t.status}`);
    li.appendChild(el('span', 'todo-mark', MARKS[t.status] ?? '○'));
    li.appendChild(el('span', 'todo-content', t.content));
    if (t.note) li.appendChild(el('span', 'todo-note', ` (${t.note})`));
    list.appendChild(li);
  }
  return [head, bar, list];
}
