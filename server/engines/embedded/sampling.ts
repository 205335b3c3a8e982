import { logSumExp, type FloatArray } from "./kernels.ts";
import type { Rng } from "./rng.ts";

/**
 * Picks next tokens over a vocabulary of `vocab` ids: argmax when `temperature` is 0, otherwise a draw
 * from softmax(logits / T) restricted to the smallest set of top tokens whose probability reaches `topP`.
 * Keeps its scratch arrays between calls.
 */
export class TokenSampler {
  private readonly order: Int32Array;
  private readonly probs: Float64Array;

  constructor(private readonly vocab: number) {
    this.order = new Int32Array(vocab);
    this.probs = new Float64Array(vocab);
  }

  pick(logits: FloatArray, temperature: number, topP: number, rng: Rng): number {
    return temperature === 0 ? argmax(logits, this.vocab) : this.draw(logits, temperature, topP, rng);
  }

  private draw(logits: FloatArray, temperature: number, topP: number, rng: Rng): number {
    const { vocab, order, probs } = this;
    let max = -Infinity;
    for (let i = 0; i < vocab; i++) if (logits[i]! > max) max = logits[i]!;
    let sum = 0;
    for (let i = 0; i < vocab; i++) {
      const p = Math.exp((logits[i]! - max) / temperature);
      probs[i] = p;
      sum += p;
    }
    let kept = vocab;
    let mass = sum;
    for (let i = 0; i < vocab; i++) order[i] = i;
    if (topP < 1) {
      const sorted = order.subarray(0, vocab).sort((a, b) => probs[b]! - probs[a]! || a - b);
      let acc = 0;
      kept = 0;
      while (kept < vocab) {
        acc += probs[sorted[kept]!]!;
        kept++;
        if (acc >= topP * sum) break;
      }
      mass = acc;
    }
    let u = rng.next() * mass;
    for (let k = 0; k < kept; k++) {
      const i = order[k]!;
      u -= probs[i]!;
      if (u < 0) return i;
    }
    return order[kept - 1]!;
  }
}

function argmax(logits: FloatArray, vocab: number): number {
  let best = 0;
  for (let i = 1; i < vocab; i++) if (logits[i]! > logits[best]!) best = i;
  return best;
}

/** The `k` most likely tokens with their temperature-1 log-probs, most likely first. */
export function topLogprobs(logits: FloatArray, vocab: number, k: number): Array<{ id: number; logprob: number }> {
  const lse = logSumExp(logits, 0, vocab);
  const ids = Array.from({ length: vocab }, (_, i) => i);
  ids.sort((a, b) => logits[b]! - logits[a]! || a - b);
  return ids.slice(0, Math.min(k, vocab)).map((id) => ({ id, logprob: logits[id]! - lse }));
}
