import type { QueuedChat } from '../src/shared/protocol';

export interface QueueView {
  title: string;
  items: { taskId: string; label: string }[];
  visible: boolean;
}

export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function queueView(queued: readonly QueuedChat[]): QueueView {
  return {
    title: queued.length === 1 ? '1 message queued' : `${queued.length} messages queued`,
    items: queued.map((q, i) => ({ taskId: q.taskId, label: `${i + 1}. ${clip(q.text, 80)}` })),
    visible: queued.length > 0,
  };
}
