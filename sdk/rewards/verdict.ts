import type { Verdict } from "./spec.ts";

/**
 * Reads a judge's verdict as a share of the reward range in [0, 1], or null when the text holds no
 * verdict of the declared kind (the caller retries). number: the first number on the last line that
 * has one; label: the last label named; json: the last `{...}` whose `field` is a number.
 */
export function parseVerdict(text: string, verdict: Verdict): number | null {
  if (verdict.kind === "number") {
    const lines = text.split("\n").reverse();
    for (const line of lines) {
      const m = /-?\d+(?:\.\d+)?/.exec(line);
      if (m) return onScale(Number(m[0]), verdict.min, verdict.max);
    }
    return null;
  }
  if (verdict.kind === "label") {
    let best: { at: number; share: number } | null = null;
    const lower = text.toLowerCase();
    for (const [label, share] of Object.entries(verdict.labels)) {
      const at = lastWord(lower, label.toLowerCase());
      if (at >= 0 && (!best || at > best.at)) best = { at, share };
    }
    return best ? best.share : null;
  }
  for (const obj of jsonObjects(text).reverse()) {
    const v = (obj as Record<string, unknown>)[verdict.field];
    if (typeof v === "number") return onScale(v, verdict.min, verdict.max);
  }
  return null;
}

/** A share of [min, max], or null outside it (a 12 on a 0-10 scale is malformed, not clipped). */
function onScale(v: number, min: number, max: number): number | null {
  if (!Number.isFinite(v) || v < min || v > max || max <= min) return null;
  return (v - min) / (max - min);
}

function lastWord(text: string, word: string): number {
  const re = new RegExp(`(?<![\\p{L}\\p{N}])${word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\p{L}\\p{N}])`, "gu");
  let at = -1;
  for (const m of text.matchAll(re)) at = m.index;
  return at;
}

/** Every balanced `{...}` in the text that parses as a JSON object, in order. */
function jsonObjects(text: string): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== "{") continue;
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      if (text[j] === "{") depth++;
      else if (text[j] === "}" && --depth === 0) {
        try {
          const v: unknown = JSON.parse(text.slice(i, j + 1));
          if (v && typeof v === "object" && !Array.isArray(v)) out.push(v);
        } catch {
          /* not JSON: keep looking */
        }
        break;
      }
    }
  }
  return out;
}

/**
 * A group judge's ranking: the last JSON array in the text that names each trajectory 1..n exactly once,
 * best first; null otherwise.
 */
export function parseRanking(text: string, n: number): number[] | null {
  const arrays = [...text.matchAll(/\[[^[\]]*\]/g)].map((m) => m[0]).reverse();
  for (const a of arrays) {
    let v: unknown;
    try {
      v = JSON.parse(a);
    } catch {
      continue;
    }
    if (!Array.isArray(v) || v.length !== n) continue;
    const seen = new Set<number>();
    if (v.every((x) => Number.isInteger(x) && x >= 1 && x <= n && !seen.has(x) && seen.add(x))) return v as number[];
  }
  return null;
}

/**
 * Ranks to rewards: the trajectory ranked r-th of n (1 = best) earns min + (max - min) * (n - r) / (n - 1);
 * a group of one earns max. Returned in trajectory order.
 */
export function rankRewards(ranking: readonly number[], range: { min: number; max: number }): number[] {
  const n = ranking.length;
  const out = new Array<number>(n);
  ranking.forEach((trajectory, i) => {
    out[trajectory - 1] = n === 1 ? range.max : range.min + ((range.max - range.min) * (n - 1 - i)) / (n - 1);
  });
  return out;
}
