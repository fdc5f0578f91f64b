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

  replace(prompts: readonly string[]): void {
    this.prompts = prompts.slice(-this.cap);
    this.index = this.prompts.length;
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
