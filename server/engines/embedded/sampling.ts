import { logSumExp, type FloatArray } from "./kernels.ts";
import type { Rng } from "./rng.ts";

export interface SampledToken {
  id: number;
  /** Log-prob of `id` under the model at temperature 1 (what PPO's ratio compares against). */
  logprob: number;
}

/**
 * Picks the next token: argmax when `temperature` is 0, otherwise a draw from softmax(logits / T)
 * restricted to the smallest set of top tokens whose probability reaches `topP`. The returned
 * log-prob is always the temperature-1 one, whatever the sampling temperature or nucleus.
 */
export function sampleToken(
  logits: FloatArray,
  vocab: number,
  temperature: number,
  topP: number,
  rng: Rng,
  order: Int32Array,
  probs: Float64Array,
): SampledToken {
  const id = temperature === 0 ? argmax(logits, vocab) : drawToken(logits, vocab, temperature, topP, rng, order, probs);
  return { id, logprob: logits[id]! - logSumExp(logits, 0, vocab) };
}

function argmax(logits: FloatArray, vocab: number): number {
  let best = 0;
  for (let i = 1; i < vocab; i++) if (logits[i]! > logits[best]!) best = i;
  return best;
}

function drawToken(
  logits: FloatArray,
  vocab: number,
  temperature: number,
  topP: number,
  rng: Rng,
  order: Int32Array,
  probs: Float64Array,
): number {
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

/** The `k` most likely tokens with their temperature-1 log-probs, most likely first. */
export function topLogprobs(logits: FloatArray, vocab: number, k: number): Array<{ id: number; logprob: number }> {
  const lse = logSumExp(logits, 0, vocab);
  const ids = Array.from({ length: vocab }, (_, i) => i);
  ids.sort((a, b) => logits[b]! - logits[a]! || a - b);
  return ids.slice(0, Math.min(k, vocab)).map((id) => ({ id, logprob: logits[id]! - lse }));
}
