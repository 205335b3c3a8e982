/** Deterministic randomness for task streams and episode seeds: the same seed gives the same run. */

/** FNV-1a over a string, 32-bit. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: a small, fast PRNG with a 32-bit state. Returns floats in [0, 1). */
export function createRng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A permutation of 0..n-1 (Fisher-Yates) drawn from `seed`. */
export function shuffleIndices(n: number, seed: number): number[] {
  const rng = createRng(seed);
  const out = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    const t = out[i]!;
    out[i] = out[j]!;
    out[j] = t;
  }
  return out;
}

/** A non-negative 31-bit integer seed derived from parts (for an episode's env seed). */
export function deriveSeed(...parts: Array<string | number>): number {
  return hashString(parts.join("\u0000")) & 0x7fffffff;
}
