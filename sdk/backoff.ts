/** Reconnect delays: exponential with jitter, capped. */
export interface BackoffOptions {
  /** First delay, ms (default 100). */
  initialMs: number;
  /** Largest delay, ms (default 5000). */
  maxMs: number;
  /** Growth per failed try (default 2). */
  factor: number;
  /** +/- this fraction of random spread, so many clients do not reconnect in lock-step (default 0.2). */
  jitter: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 100, maxMs: 5000, factor: 2, jitter: 0.2 };

/** The delay before reconnect try `n` (0-based). */
export function backoffDelay(n: number, o: BackoffOptions, random: () => number = Math.random): number {
  const base = Math.min(o.maxMs, o.initialMs * o.factor ** n);
  return Math.max(0, Math.round(base * (1 + o.jitter * (2 * random() - 1))));
}
