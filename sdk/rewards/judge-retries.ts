import { setTimeout as wait } from "node:timers/promises";
import { backoffDelay } from "../backoff.ts";

/** The waits between a judge's tries. */
export interface JudgeBackoff {
  /** The backoff's first step, the wait before the second try; each further step doubles it. Default 1000. */
  baseMs: number;
  /** The largest step. Default 8000. */
  maxMs: number;
  /** The share of each step drawn at random, 0 to 0.5: a wait is a random point in (step * (1 - jitter), step]. Default 0.5. */
  jitter: number;
  /** The longest wait a `Retry-After` header gets (default 60000): a judge that asks for more is tried again after this, so one reward never waits unboundedly. */
  retryAfterMaxMs: number;
}

/** 0.5-1 s before the second try, 1-2 s before the third, doubling up to 4-8 s; `Retry-After` honoured up to 60 s. */
export const JUDGE_BACKOFF: Readonly<JudgeBackoff> = { baseMs: 1_000, maxMs: 8_000, jitter: 0.5, retryAfterMaxMs: 60_000 };

/**
 * The wait after the `n`-th failed try that is worth another (1 = the first): exponential backoff, step =
 * min(maxMs, baseMs * 2^(n-1)), with jitter: a random point in (step * (1 - jitter), step]. The jitter
 * keeps the many episodes a client judges at once from retrying in step; up to 0.5, no wait is shorter
 * than the one before. A `Retry-After` from the judge is a floor, capped at `retryAfterMaxMs`.
 */
export function retryDelayMs(n: number, backoff: JudgeBackoff, retryAfterMs?: number, random: () => number = Math.random): number {
  // the swarm client's reconnect backoff without its two-sided jitter: the judge's is one-sided, below
  const step = backoffDelay(n - 1, { initialMs: backoff.baseMs, maxMs: backoff.maxMs, factor: 2, jitter: 0 });
  const jittered = Math.round(step * (1 - backoff.jitter * random()));
  return retryAfterMs === undefined ? jittered : Math.max(jittered, Math.min(retryAfterMs, backoff.retryAfterMaxMs));
}

/** A `Retry-After` header (delay-seconds or an HTTP date) in milliseconds from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null, now: number = Date.now()): number | undefined {
  const value = header?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  // An HTTP date names its weekday and month; Date.parse alone would read "-1" or "12" as years.
  const at = /[a-z]/i.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * HTTP statuses worth another try: 408 (request timeout), 429 (rate limited) and 5xx (the judge's side:
 * overloaded, restarting, a proxy's gateway error). Any other (400, 401, 403, 404, ...) is an answer about
 * the request itself, which another try would get again.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** Waits `ms`; an abort of `signal` ends the wait at once, rejecting with an AbortError. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return wait(ms, undefined, signal ? { signal } : {});
}
