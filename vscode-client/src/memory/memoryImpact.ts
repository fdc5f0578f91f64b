// Pure (no vscode import): what a memory edit touches.
import type { MemoryEntry } from '../shared/protocol';

/** shiro/memory/forget removes every entry containing the text: the ones a forget of `text` would remove. */
export function forgetImpact(entries: readonly MemoryEntry[], text: string): MemoryEntry[] {
  return entries.filter(e => e.text.includes(text));
}
