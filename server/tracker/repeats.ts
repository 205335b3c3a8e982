/**
 * What a call repeats of its agent's previous call: an agent's call k sends calls 1..k-1's messages again
 * (and the same tools), each request parsed into new objects. The tracker keeps the earlier objects in
 * their place, so an episode holds each message once, and its writer sends each message once.
 */

/** Strings longer than this are never compared (a 4 MB message against another would hold the event loop): taken as different. */
const COMPARED_CHARS = 1 << 18;

/**
 * Whether two values of JSON data are the same JSON (JSON.stringify gives the same text): the same keys in
 * the same order, the same values. Anything it is not sure of (a very long string, a non-plain object) is
 * different.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  // each `typeof` is compared with a literal: `typeof a !== typeof b` makes V8 build both type names, a
  // builtin call per value compared (perf: 3.5% of the event loop on the bench's multi-turn shape)
  if (typeof a === "string") return typeof b === "string" && a.length === b.length && a.length <= COMPARED_CHARS && a === b;
  if (typeof a !== "object" || a === null) return a === b;
  if (typeof b !== "object" || b === null) return false;
  // the same object (an earlier call's message kept in place) is the same JSON
  if (a === b) return true;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  if (Array.isArray(x)) {
    if (!Array.isArray(y) || x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!sameJson(x[i], y[i])) return false;
    return true;
  }
  if (Array.isArray(y) || Object.getPrototypeOf(x) !== Object.prototype || Object.getPrototypeOf(y) !== Object.prototype) return false;
  const kx = Object.keys(x);
  const ky = Object.keys(y);
  if (kx.length !== ky.length) return false;
  for (let i = 0; i < kx.length; i++) if (kx[i] !== ky[i] || !sameJson(x[kx[i]!], y[kx[i]!])) return false;
  return true;
}

/**
 * `next` with its leading messages that repeat `previous` (the same JSON, in the same places) replaced by
 * `previous`'s own objects; `previous` itself when `next` repeats all of it and nothing more.
 */
export function shareRepeats(previous: unknown[], next: unknown[]): unknown[] {
  if (previous === next) return next;
  const n = Math.min(previous.length, next.length);
  let same = 0;
  while (same < n && sameJson(previous[same], next[same])) same++;
  if (same === 0) return next;
  if (same === next.length) return same === previous.length ? previous : previous.slice(0, same);
  const out = previous.slice(0, same);
  for (let i = same; i < next.length; i++) out.push(next[i]);
  return out;
}
