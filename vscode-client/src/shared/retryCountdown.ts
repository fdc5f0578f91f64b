// The countdown of a model call that Shiro retries (the server's `retry` event). Pure: no vscode import.

/** One announced wait: when it ends (ms since the epoch) and which attempt follows it. */
export interface RetryWait {
  until: number;
  attempt: number;
  maxAttempts: number;
  /** The turn went on (an answer, an error or the end came): the wait is history. */
  settled?: boolean;
}

export function retryWait(
  event: { attempt?: number; maxAttempts?: number; delaySeconds?: number },
  now: number,
): RetryWait {
  const delay = Math.max(0, Number(event.delaySeconds ?? 0));
  return {
    until: now + delay * 1000,
    attempt: event.attempt ?? 2,
    maxAttempts: event.maxAttempts ?? event.attempt ?? 2,
  };
}

/** "Retrying in 3 s… (attempt 2 of 4)", "Retrying now… (attempt 2 of 4)", or "Retried (attempt 2 of 4)". */
export function retryLabel(wait: RetryWait, now: number): string {
  const of = `(attempt ${wait.attempt} of ${wait.maxAttempts})`;
  if (wait.settled) return `Retried ${of}`;
  const left = Math.ceil((wait.until - now) / 1000);
  return left > 0 ? `Retrying in ${left} s… ${of}` : `Retrying now… ${of}`;
}

/** Milliseconds until the label changes (the next whole second), or undefined when it no longer will. */
export function nextTick(wait: RetryWait, now: number): number | undefined {
  if (wait.settled || now >= wait.until) return undefined;
  const left = wait.until - now;
  return left % 1000 || 1000;
}
