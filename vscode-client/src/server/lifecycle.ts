// One queue for a server's starts and stops. Starts come from several places at once (activation, the Workspace
// Trust grant, a settings change, "Shiro: Restart server" pressed twice); run side by side, each would pass its
// stop() before the other had a client, both would build one, and the first would be orphaned. Here every step
// waits for the one before it, so a stop always sees the client the last start made.

export interface LifecycleSteps {
  /** Start a fresh server (the previous one is already stopped). */
  start(): Promise<void>;
  /** Stop the current server, if any. */
  stop(): Promise<void>;
}

export class Lifecycle {
  private tail: Promise<void> = Promise.resolve();
  /** A restart that is queued but has not begun: later requests join it (it will read the newest settings). */
  private pendingStart: Promise<void> | undefined;
  private disposed = false;

  constructor(private readonly steps: LifecycleSteps) {}

  /** Stop the running server and start a new one, after whatever is already queued. */
  restart(): Promise<void> {
    if (this.disposed) return Promise.resolve();
    if (this.pendingStart) return this.pendingStart;
    const run = this.enqueue(async () => {
      this.pendingStart = undefined; // begun: a request from now on may carry newer settings, so it queues anew
      if (this.disposed) return;
      await this.steps.stop();
      await this.steps.start();
    });
    this.pendingStart = run;
    return run;
  }

  /** Stop the server after whatever is already queued (a start in progress finishes first, then is stopped). */
  stop(): Promise<void> {
    this.pendingStart = undefined; // a start queued before this stop must not satisfy a start asked after it
    return this.enqueue(() => this.steps.stop());
  }

  /** Stop for good: queued restarts that have not begun are dropped, later ones are refused. */
  dispose(): Promise<void> {
    this.disposed = true;
    return this.stop();
  }

  /** Resolves once every step queued so far has ended (whether it succeeded or not). */
  settled(): Promise<void> {
    return this.tail;
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    const run = this.tail.then(step);
    this.tail = run.catch(() => undefined);
    return run;
  }
}
