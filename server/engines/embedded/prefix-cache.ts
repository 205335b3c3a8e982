import { KvCache } from "./decode.ts";
import type { ModelShape } from "./layout.ts";

/**
 * A few KV caches kept between calls, so that a multi-turn agent's next prompt (the last prompt plus
 * the last output plus a new message) only computes its new tokens. Least recently used goes first.
 * Valid for one weight version: the engine clears it whenever the weights change.
 */
export class PrefixCachePool {
  private entries: KvCache[] = [];

  constructor(
    private readonly shape: ModelShape,
    private readonly capacity: number,
  ) {}

  /** A cache whose first `reuse` positions already hold `prompt[0..reuse)`; at least the last prompt token is left to compute. */
  acquire(prompt: readonly number[]): { cache: KvCache; reuse: number } {
    let best = -1;
    let bestLen = 0;
    for (let i = 0; i < this.entries.length; i++) {
      const len = commonPrefix(this.entries[i]!.tokens, prompt);
      if (len > bestLen) {
        best = i;
        bestLen = len;
      }
    }
    let cache: KvCache;
    if (best >= 0) cache = this.entries.splice(best, 1)[0]!;
    else if (this.entries.length < this.capacity) cache = new KvCache(this.shape);
    else cache = this.entries.shift()!;
    const reuse = Math.min(bestLen, prompt.length - 1);
    cache.truncate(reuse);
    this.entries.push(cache);
    return { cache, reuse };
  }

  clear(): void {
    for (const e of this.entries) e.truncate(0);
  }
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}
