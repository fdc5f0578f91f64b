/** Up/Down walk through earlier prompts like a shell; the unsent draft is kept and comes back at the end. */
export class PromptHistory {
  private prompts: string[];
  private index: number;
  private draft = '';

  constructor(
    prompts: readonly string[] = [],
    private readonly cap = 200,
  ) {
    this.prompts = prompts.slice(-cap);
    this.index = this.prompts.length;
  }

  get entries(): readonly string[] {
    return this.prompts;
  }

  /** The host's list, which can arrive while the reader walks: the walk stays on the prompt shown. */
  replace(prompts: readonly string[]): void {
    const fromEnd = this.prompts.length - this.index;
    const shown = fromEnd > 0 ? this.prompts[this.index] : undefined;
    this.prompts = prompts.slice(-this.cap);
    const stays = shown !== undefined && this.prompts[this.prompts.length - fromEnd] === shown;
    this.index = stays ? this.prompts.length - fromEnd : this.prompts.length;
  }

  /** Older prompt, or undefined at the oldest. `current` is what the input holds now. */
  up(current: string): string | undefined {
    if (this.index === 0) return undefined;
    if (this.index === this.prompts.length) this.draft = current;
    this.index -= 1;
    return this.prompts[this.index];
  }

  /** Newer prompt, the draft after the newest, or undefined when already at the draft. */
  down(): string | undefined {
    if (this.index >= this.prompts.length) return undefined;
    this.index += 1;
    return this.index === this.prompts.length ? this.draft : this.prompts[this.index];
  }

  push(prompt: string): void {
    const text = prompt.trim();
    if (text && this.prompts[this.prompts.length - 1] !== text) {
      this.prompts.push(text);
      if (this.prompts.length > this.cap) this.prompts.shift();
    }
    this.index = this.prompts.length;
    this.draft = '';
  }
}
