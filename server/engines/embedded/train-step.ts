import type { TrainSample } from "../../training/sample.ts";
import type { AttentionLayout } from "./attention-layout.ts";
import { allocLike, logSumExp } from "./kernels.ts";
import type { ModelShape, ModelWeights } from "./layout.ts";
import { backwardSequence, forwardLayout, forwardSequence, scoreSequence, type TransposedWeights } from "./model.ts";
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

/** The rows whose logits score a trained token of `sample` (t - 1 for each masked t >= 1), ascending. */
export function lossRows(sample: TrainSample): Int32Array {
  const rows: number[] = [];
  for (let t = 1; t < sample.tokenIds.length; t++) if (sample.lossMask[t] === 1) rows.push(t - 1);
  return Int32Array.from(rows);
}

/** Log-probs of the sample's trained tokens under a reference model (for the KL term); 0 for the others. */
export function scoreReference(ref: ModelWeights, shape: ModelShape, sample: TrainSample): number[] {
  return scoreSequence(forwardSequence(ref, shape, sample.tokenIds, lossRows(sample)), shape.vocabSize);
}

/**
 * Adds masked token t of `sample` (log-prob `newLogp` under the current weights) to `totals`, its loss
 * times `scale`; returns d loss / d newLogp times `scale`.
 */
function addTokenLoss(
  totals: LossTotals,
  sample: TrainSample,
  t: number,
  newLogp: number,
  refLogp: number | undefined,
  scale: number,
  params: StepLossParams,
): number {
  const tl = computeTokenLoss(newLogp, params.supervised ? newLogp : sample.logprobs[t]!, sample.advantage, refLogp, params);
  totals.loss += scale * (params.supervised ? -newLogp : tl.loss);
  totals.tokens++;
  totals.kl += tl.kl;
  if (tl.clipped) totals.clipped++;
  return scale * tl.dLogp;
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
  const rows = lossRows(sample);
  if (rows.length === 0) return;
  // Only the rows that score a trained token: the prompt's rows make no logits and take no output-layer work.
  const pass = forwardSequence(w, shape, sample.tokenIds, rows);
  const dLogits = allocLike(w.buffer, rows.length * V);
  const scale = sample.weight / batchTokens;
  let anyActive = false;
  for (let t = 1; t < T; t++) {
    if (sample.lossMask[t] !== 1) continue;
    const off = pass.logitRow[t - 1]! * V;
    const lse = logSumExp(pass.logits, off, V);
    const id = sample.tokenIds[t]!;
    const newLogp = pass.logits[off + id]! - lse;
    const g = addTokenLoss(totals, sample, t, newLogp, refLogps?.[t], scale, params);
    if (g === 0) continue;
    // d logp(id) / d logits = onehot(id) - softmax.
    for (let v = 0; v < V; v++) dLogits[off + v] = -g * Math.exp(pass.logits[off + v]! - lse);
    dLogits[off + id]! += g;
    anyActive = true;
  }
  if (anyActive) backwardSequence(w, wT, grads, shape, pass, dLogits);
}

/**
 * Samples packed into one prefix trie: `layout` is the trie's ([`treeLayout`]), `parents` its parent
 * links, and `paths[k]` the nodes of `samples[k]` root to leaf (entry t holds its token t).
 */
export interface TreeTrainPack {
  layout: AttentionLayout;
  parents: readonly number[];
  samples: readonly TrainSample[];
  paths: ReadonlyArray<readonly number[]>;
}

/** The trie's rows whose logits score a trained token of one of its samples (a masked node's parent), ascending. */
export function treeLossRows(pack: TreeTrainPack): Int32Array {
  const wanted = new Uint8Array(pack.layout.ids.length);
  pack.samples.forEach((sample, k) => {
    const path = pack.paths[k]!;
    for (let t = 1; t < path.length; t++) if (sample.lossMask[t] === 1) wanted[path[t - 1]!] = 1;
  });
  const rows: number[] = [];
  wanted.forEach((w, row) => w === 1 && rows.push(row));
  return Int32Array.from(rows);
}

/** Log-prob of each trained trie node's token given its path under a reference model (0 for the other nodes). */
export function scoreReferenceTree(ref: ModelWeights, shape: ModelShape, pack: TreeTrainPack): Float64Array {
  const V = shape.vocabSize;
  const pass = forwardLayout(ref, shape, pack.layout, treeLossRows(pack));
  const out = new Float64Array(pack.parents.length);
  pack.parents.forEach((p, i) => {
    const row = p >= 0 ? pass.logitRow[p]! : -1;
    if (row >= 0) out[i] = pass.logits[row * V + pack.layout.ids[i]!]! - logSumExp(pass.logits, row * V, V);
  });
  return out;
}

/**
 * `accumulateSample` for every sample of a trie at once: one forward and one backward pass over the
 * trie's nodes. Each sample's masked token t adds its own loss (its behaviour log-prob, advantage and
 * weight) at its node, scored from the parent node's logits, so the loss and gradient are the flat
 * samples' (sums in another order: equal to float rounding).
 */
export function accumulateTree(
  w: ModelWeights,
  wT: TransposedWeights,
  grads: ModelWeights,
  shape: ModelShape,
  pack: TreeTrainPack,
  refLogps: Float64Array | undefined,
  batchTokens: number,
  params: StepLossParams,
  totals: LossTotals,
): void {
  const V = shape.vocabSize;
  const N = pack.layout.ids.length;
  const rows = treeLossRows(pack);
  if (rows.length === 0) return;
  const pass = forwardLayout(w, shape, pack.layout, rows);
  const dLogits = allocLike(w.buffer, rows.length * V);
  const lse = new Float64Array(N).fill(Number.NaN);
  const softmaxWeight = new Float64Array(N);
  const active = new Uint8Array(N);
  let anyActive = false;
  pack.samples.forEach((sample, k) => {
    const path = pack.paths[k]!;
    const scale = sample.weight / batchTokens;
    for (let t = 1; t < path.length; t++) {
      if (sample.lossMask[t] !== 1) continue;
      const node = path[t]!;
      const row = path[t - 1]!;
      const off = pass.logitRow[row]! * V;
      if (Number.isNaN(lse[row]!)) lse[row] = logSumExp(pass.logits, off, V);
      const id = sample.tokenIds[t]!;
      const newLogp = pass.logits[off + id]! - lse[row]!;
      const g = addTokenLoss(totals, sample, t, newLogp, refLogps?.[node], scale, params);
      if (g === 0) continue;
      softmaxWeight[row]! += g;
      dLogits[off + id]! += g;
      active[row] = 1;
      anyActive = true;
    }
  });
  if (!anyActive) return;
  for (let row = 0; row < N; row++) {
    if (active[row] !== 1) continue;
    const off = pass.logitRow[row]! * V;
    const g = softmaxWeight[row]!;
    const l = lse[row]!;
    for (let v = 0; v < V; v++) dLogits[off + v]! -= g * Math.exp(pass.logits[off + v]! - l);
  }
  backwardSequence(w, wT, grads, shape, pass, dLogits);
}
