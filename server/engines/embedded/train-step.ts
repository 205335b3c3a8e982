import type { TrainSample } from "../../training/sample.ts";
import { allocLike, logSumExp } from "./kernels.ts";
import type { ModelShape, ModelWeights } from "./layout.ts";
import { backwardSequence, forwardSequence, scoreSequence, type TransposedWeights } from "./model.ts";
import { computeTokenLoss, type TokenLossParams } from "./ppo-loss.ts";

/** The loss of one step: PPO-clip (+KL), or supervised (ratio 1, the reported loss the mean negative log-likelihood). */
export interface StepLossParams extends TokenLossParams {
  supervised?: boolean;
}

/** Sums over the masked tokens of the samples seen so far. */
export interface LossTotals {
  /** Σ weight · token loss / batchTokens. */
  loss: number;
  tokens: number;
  clipped: number;
  /** Σ k3 KL over tokens (unweighted). */
  kl: number;
}

export function createLossTotals(): LossTotals {
  return { loss: 0, tokens: 0, clipped: 0, kl: 0 };
}

/** Masked tokens that the loss sees: positions t >= 1 (position 0 has nothing to predict it). */
export function countLossTokens(sample: TrainSample): number {
  let n = 0;
  for (let t = 1; t < sample.tokenIds.length; t++) if (sample.lossMask[t] === 1) n++;
  return n;
}

/** Log-probs of the sample's tokens under a reference model (for the KL term). */
export function scoreReference(ref: ModelWeights, shape: ModelShape, sample: TrainSample): number[] {
  return scoreSequence(forwardSequence(ref, shape, sample.tokenIds), shape.vocabSize);
}

/**
 * Adds one sample's contribution to the batch loss to `totals` and its gradient to `grads`. The loss is
 * the token mean over the batch: each masked token's PPO(+KL) loss times the sample's weight, over
 * `batchTokens` (the masked-token count of the whole batch).
 */
export function accumulateSample(
  w: ModelWeights,
  wT: TransposedWeights,
  grads: ModelWeights,
  shape: ModelShape,
  sample: TrainSample,
  refLogps: readonly number[] | undefined,
  batchTokens: number,
  params: StepLossParams,
  totals: LossTotals,
): void {
  const V = shape.vocabSize;
  const T = sample.tokenIds.length;
  const pass = forwardSequence(w, shape, sample.tokenIds);
  const dLogits = allocLike(w.buffer, T * V);
  const scale = sample.weight / batchTokens;
  let anyActive = false;
  for (let t = 1; t < T; t++) {
    if (sample.lossMask[t] !== 1) continue;
    const off = (t - 1) * V;
    const lse = logSumExp(pass.logits, off, V);
    const id = sample.tokenIds[t]!;
    const newLogp = pass.logits[off + id]! - lse;
    const tl = computeTokenLoss(newLogp, params.supervised ? newLogp : sample.logprobs[t]!, sample.advantage, refLogps?.[t], params);
    totals.loss += scale * (params.supervised ? -newLogp : tl.loss);
    totals.tokens++;
    totals.kl += tl.kl;
    if (tl.clipped) totals.clipped++;
    const g = scale * tl.dLogp;
    if (g === 0) continue;
    // d logp(id) / d logits = onehot(id) - softmax.
    for (let v = 0; v < V; v++) dLogits[off + v] = -g * Math.exp(pass.logits[off + v]! - lse);
    dLogits[off + id]! += g;
    anyActive = true;
  }
  if (anyActive) backwardSequence(w, wT, grads, shape, pass, dLogits);
}
