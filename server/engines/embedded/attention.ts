import { forEachBlock, BLOCK } from "./attention-blocks.ts";
import {
  backKeys1,
  backKeys4,
  backValues1,
  backValues4,
  mix1,
  mix4,
  score1,
  score4,
  softmaxInPlace,
  type BackwardArrays,
  type ForwardArrays,
} from "./attention-kernels.ts";
import type { AttentionLayout } from "./attention-layout.ts";
import type { FloatArray } from "./kernels.ts";

/**
 * Multi-head softmax attention over each token's path (an `AttentionLayout`), forward and backward, with
 * q, k, v packed in `qkv` ([tokens, 3·dim]). Queries go in blocks of four consecutive tokens of a segment
 * (`attention-blocks.ts`): the keys they all see (the segment's ancestor ranges and the segment up to the
 * block's first token) are walked once for the four, so each key row is loaded once per block; the few
 * keys inside the block go query by query. Every per-query sum (a score, the softmax, the mix of values)
 * runs over the keys in path order, so a token's result does not depend on the block it falls in.
 */

/**
 * out = attention(qkv); `probs` ([heads, path entries]) keeps each token's weights over its path. With
 * `need` (1 per token whose output is wanted), a block of four queries none of which is wanted is skipped:
 * its rows of `out` stay 0 and of `probs` unset (the backward skips a block whose output has no gradient).
 */
export function attentionForward(out: FloatArray, probs: FloatArray, qkv: FloatArray, layout: AttentionLayout, D: number, H: number, need?: Uint8Array): void {
  const { positions } = layout;
  const fw: ForwardArrays = { out, probs, qkv };
  out.fill(0);
  forEachBlock(layout, D, H, (blk) => {
    const { t0, u, shared, S, qo } = blk;
    if (need !== undefined && !anyOf(need, t0, u)) return;
    if (shared > 0) blk.forSharedKeys((a, b, j) => score4(fw, blk, j, a, b));
    for (let q = t0; q < t0 + u; q++) {
      const e = blk.entry(q);
      const qt = q * S + qo;
      blk.forOwnKeys(q, (a, b, j) => score1(fw, blk, e + j, qt, a, b));
      softmaxInPlace(probs, e, positions[q]! + 1);
    }
    if (shared > 0) blk.forSharedKeys((a, b, j) => mix4(fw, blk, j, a, b));
    for (let q = t0; q < t0 + u; q++) {
      const e = blk.entry(q);
      const o = q * D + qo;
      blk.forOwnKeys(q, (a, b, j) => mix1(fw, blk, o, e + j, a, b));
    }
  });
}

/** dqkv = d attention / d qkv given dOut, from the forward's `probs`. */
export function attentionBackward(
  dqkv: FloatArray,
  dOut: FloatArray,
  probs: FloatArray,
  qkv: FloatArray,
  layout: AttentionLayout,
  D: number,
  H: number,
): void {
  const { positions } = layout;
  let stride = 0;
  for (let t = 0; t < positions.length; t++) stride = Math.max(stride, positions[t]! + 1);
  // dp[q, j] = dOut_q · v_j for the block's queries, `stride` apart.
  const bw: BackwardArrays = { dqkv, dOut, probs, qkv, dp: new Float64Array(BLOCK * stride), stride, sums: new Float64Array(BLOCK) };
  const { sums } = bw;
  dqkv.fill(0);
  forEachBlock(layout, D, H, (blk) => {
    const { t0, u, shared, S, qo, hd } = blk;
    // A query whose output has no gradient (no loss reads it: in the last layer, a token whose next
    // token is not trained) adds nothing; a block of them is skipped.
    if (isZero(dOut, t0 * D + qo, u, D, hd)) return;
    // dp[q, j] = dOut_q · v_j, dv_j += p[q, j] dOut_q, sums[q] = Σ_j p[q, j] dp[q, j].
    sums.fill(0);
    if (shared > 0) blk.forSharedKeys((a, b, j) => backValues4(bw, blk, j, a, b));
    for (let k = 0; k < u; k++) {
      const q = t0 + k;
      const e = blk.entry(q);
      const o = q * D + qo;
      blk.forOwnKeys(q, (a, b, j) => {
        sums[k] = sums[k]! + backValues1(bw, blk, k * stride + j, e + j, o, a, b);
      });
    }
    // ds[q, j] = p[q, j] (dp[q, j] - sums[q]) scale; dq_q += ds k_j, dk_j += ds q_q.
    if (shared > 0) blk.forSharedKeys((a, b, j) => backKeys4(bw, blk, j, a, b));
    for (let k = 0; k < u; k++) {
      const q = t0 + k;
      const e = blk.entry(q);
      const qt = q * S + qo;
      blk.forOwnKeys(q, (a, b, j) => backKeys1(bw, blk, k * stride + j, sums[k]!, e + j, qt, a, b));
    }
  });
}

/** Whether any of need[t0 .. t0 + u) is set. */
function anyOf(need: Uint8Array, t0: number, u: number): boolean {
  for (let t = t0; t < t0 + u; t++) if (need[t] === 1) return true;
  return false;
}

/** Whether rows o, o + D, .. (`rows` of them) of `x` are zero over `n` entries. */
function isZero(x: FloatArray, o: number, rows: number, D: number, n: number): boolean {
  for (let r = 0; r < rows; r++) {
    for (let i = 0; i < n; i++) if (x[o + r * D + i] !== 0) return false;
  }
  return true;
}
