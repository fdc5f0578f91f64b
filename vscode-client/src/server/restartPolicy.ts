/** Restart a crashed server up to `max` times within `windowMs`; after that, stop and let the user decide. */
export class RestartPolicy {
  private times: number[] = [];

  constructor(
    private readonly max = 4,
    private readonly windowMs = 3 * 60_000,
  ) {}

  /** Record a crash at `now`; the answer is the restart number (1-based), or undefined to give up. */
  crashed(now: number): number | undefined {
    this.times = this.times.filter(t => now - t < this.windowMs);
    this.times.push(now);
    return this.times.length <= this.max ? this.times.length : undefined;
  }
}
