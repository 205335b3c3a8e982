/** A small seeded PRNG (mulberry32): the same seed gives the same sequence on every platform. */
export function createRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Mixes a split name into a seed so that `train` and `test` draw different tasks from one seed. */
export function seedFor(seed: number, split: string): number {
  let h = seed >>> 0;
  for (let i = 0; i < split.length; i++) h = Math.imul(h ^ split.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

export function randomInt(rand: () => number, lo: number, hi: number): number {
  return lo + Math.floor(rand() * (hi - lo + 1));
}
