import type { QueryBlock } from "./attention-blocks.ts";
import { addScaled, addScaled4, dot, dot4, type FloatArray } from "./kernels.ts";

/**
 * The attention kernels over one range of keys a..b for one head (`blk`'s): a `…1` kernel for one query,
 * a `…4` kernel for the four queries of a block together (each key row loaded once for the four), the
 * four's path entries j on from `blk.e0..e3`. Every per-query sum runs over the keys in path order, so
 * both give a query the same result.
 */

/** Four per-query values of one key (one thread: nothing runs between a write and its reads). */
const FOUR = new Float64Array(4);

/** The forward pass's arrays: `out` [tokens, dim], `probs` [heads, path entries], `qkv` [tokens, 3·dim]. */
export interface ForwardArrays {
  out: FloatArray;
  probs: FloatArray;
  qkv: FloatArray;
}

/** The backward pass's arrays; `dp` holds the block's rows dOut_q · v_j, `stride` apart, and `sums` their Σ_j p dp. */
export interface BackwardArrays {
  dqkv: FloatArray;
  dOut: FloatArray;
  probs: FloatArray;
  qkv: FloatArray;
  dp: Float64Array;
  stride: number;
  sums: Float64Array;
}

/** probs[e + key - a] = q · k_key · scale, q at `qt` of `qkv`. */
export function score1(fw: ForwardArrays, blk: QueryBlock, e: number, qt: number, a: number, b: number): void {
  const { probs, qkv } = fw;
  const { S, ko, hd, scale } = blk;
  for (let key = a; key < b; key++) probs[e++] = dot(qkv, qt, qkv, key * S + ko, hd) * scale;
}

export function score4(fw: ForwardArrays, blk: QueryBlock, j: number, a: number, b: number): void {
  const { probs, qkv } = fw;
  const { S, ko, hd, scale } = blk;
  let e0 = blk.e0 + j, e1 = blk.e1 + j, e2 = blk.e2 + j, e3 = blk.e3 + j;
  const q0 = blk.t0 * S + blk.qo;
  for (let key = a; key < b; key++) {
    dot4(FOUR, qkv, q0, S, qkv, key * S + ko, hd);
    probs[e0++] = FOUR[0]! * scale;
    probs[e1++] = FOUR[1]! * scale;
    probs[e2++] = FOUR[2]! * scale;
    probs[e3++] = FOUR[3]! * scale;
  }
}

export function softmaxInPlace(x: FloatArray, e: number, n: number): void {
  let max = -Infinity;
  for (let j = 0; j < n; j++) if (x[e + j]! > max) max = x[e + j]!;
  let sum = 0;
  for (let j = 0; j < n; j++) {
    const v = Math.exp(x[e + j]! - max);
    x[e + j] = v;
    sum += v;
  }
  const inv = 1 / sum;
  for (let j = 0; j < n; j++) x[e + j] = x[e + j]! * inv;
}

/** out[o ..] += Σ p_key v_key, the weights from probs[e ..]. */
export function mix1(fw: ForwardArrays, blk: QueryBlock, o: number, e: number, a: number, b: number): void {
  const { out, probs, qkv } = fw;
  const { S, vo, hd } = blk;
  for (let key = a; key < b; key++) addScaled(out, o, probs[e++]!, qkv, key * S + vo, hd);
}

/** `mix1` into the block's four output rows. */
export function mix4(fw: ForwardArrays, blk: QueryBlock, j: number, a: number, b: number): void {
  const { out, probs, qkv } = fw;
  const { D, S, vo, hd } = blk;
  let e0 = blk.e0 + j, e1 = blk.e1 + j, e2 = blk.e2 + j, e3 = blk.e3 + j;
  const o0 = blk.t0 * D + blk.qo;
  for (let key = a; key < b; key++) {
    addScaled4(out, o0, D, probs[e0++]!, probs[e1++]!, probs[e2++]!, probs[e3++]!, qkv, key * S + vo, hd);
  }
}

/** dp[d ..] = dOut_o · v_key, dv_key += p dOut_o, the weights from probs[e ..]; returns Σ p · dp. */
export function backValues1(bw: BackwardArrays, blk: QueryBlock, d: number, e: number, o: number, a: number, b: number): number {
  const { dqkv, dOut, probs, qkv, dp } = bw;
  const { S, vo, hd } = blk;
  let sum = 0;
  for (let key = a; key < b; key++) {
    const vs = key * S + vo;
    const p = probs[e++]!;
    let x = 0;
    for (let i = 0; i < hd; i++) {
      const g = dOut[o + i]!;
      dqkv[vs + i]! += p * g;
      x += g * qkv[vs + i]!;
    }
    dp[d++] = x;
    sum += p * x;
  }
  return sum;
}

/**
 * `backValues1` for the block's four rows of dOut, dp rows from j, `stride` apart, adding to sums[0..3].
 * One loop over the head's entries does both the gradient and the dot products (unlike the forward
 * kernels' `dot4` / `addScaled4`: two passes make the backward pass about a quarter slower); so does `backKeys4`.
 */
export function backValues4(bw: BackwardArrays, blk: QueryBlock, j: number, a: number, b: number): void {
  const { dqkv, dOut, probs, qkv, dp, stride, sums } = bw;
  const { D, S, vo, hd } = blk;
  let e0 = blk.e0 + j, e1 = blk.e1 + j, e2 = blk.e2 + j, e3 = blk.e3 + j;
  let d = j;
  const o0 = blk.t0 * D + blk.qo, o1 = o0 + D, o2 = o1 + D, o3 = o2 + D;
  let m0 = sums[0]!, m1 = sums[1]!, m2 = sums[2]!, m3 = sums[3]!;
  for (let key = a; key < b; key++) {
    const vs = key * S + vo;
    const p0 = probs[e0++]!, p1 = probs[e1++]!, p2 = probs[e2++]!, p3 = probs[e3++]!;
    let x0 = 0, x1 = 0, x2 = 0, x3 = 0;
    for (let i = 0; i < hd; i++) {
      const v = qkv[vs + i]!;
      const g0 = dOut[o0 + i]!, g1 = dOut[o1 + i]!, g2 = dOut[o2 + i]!, g3 = dOut[o3 + i]!;
      dqkv[vs + i]! += p0 * g0 + p1 * g1 + p2 * g2 + p3 * g3;
      x0 += g0 * v;
      x1 += g1 * v;
      x2 += g2 * v;
      x3 += g3 * v;
    }
    dp[d] = x0;
    dp[d + stride] = x1;
    dp[d + 2 * stride] = x2;
    dp[d + 3 * stride] = x3;
    d++;
    m0 += p0 * x0;
    m1 += p1 * x1;
    m2 += p2 * x2;
    m3 += p3 * x3;
  }
  sums[0] = m0;
  sums[1] = m1;
  sums[2] = m2;
  sums[3] = m3;
}

/** ds = p (dp - sum) scale from probs[e ..], dp[d ..]; dq_qt += ds k_key, dk_key += ds q_qt. */
export function backKeys1(bw: BackwardArrays, blk: QueryBlock, d: number, sum: number, e: number, qt: number, a: number, b: number): void {
  const { dqkv, probs, qkv, dp } = bw;
  const { S, ko, hd, scale } = blk;
  for (let key = a; key < b; key++) {
    const ds = probs[e++]! * (dp[d++]! - sum) * scale;
    const ks = key * S + ko;
    for (let i = 0; i < hd; i++) {
      dqkv[qt + i]! += ds * qkv[ks + i]!;
      dqkv[ks + i]! += ds * qkv[qt + i]!;
    }
  }
}

/** `backKeys1` for the block's four queries, dp rows from j, `stride` apart, with sums[0..3]. */
export function backKeys4(bw: BackwardArrays, blk: QueryBlock, j: number, a: number, b: number): void {
  const { dqkv, probs, qkv, dp, stride, sums } = bw;
  const { S, ko, hd, scale } = blk;
  let e0 = blk.e0 + j, e1 = blk.e1 + j, e2 = blk.e2 + j, e3 = blk.e3 + j;
  let d = j;
  const m0 = sums[0]!, m1 = sums[1]!, m2 = sums[2]!, m3 = sums[3]!;
  const q0 = blk.t0 * S + blk.qo, q1 = q0 + S, q2 = q1 + S, q3 = q2 + S;
  for (let key = a; key < b; key++) {
    const s0 = probs[e0++]! * (dp[d]! - m0) * scale;
    const s1 = probs[e1++]! * (dp[d + stride]! - m1) * scale;
    const s2 = probs[e2++]! * (dp[d + 2 * stride]! - m2) * scale;
    const s3 = probs[e3++]! * (dp[d + 3 * stride]! - m3) * scale;
    d++;
    const ks = key * S + ko;
    for (let i = 0; i < hd; i++) {
      const k = qkv[ks + i]!;
      dqkv[ks + i]! += s0 * qkv[q0 + i]! + s1 * qkv[q1 + i]! + s2 * qkv[q2 + i]! + s3 * qkv[q3 + i]!;
      dqkv[q0 + i]! += s0 * k;
      dqkv[q1 + i]! += s1 * k;
      dqkv[q2 + i]! += s2 * k;
      dqkv[q3 + i]! += s3 * k;
    }
  }
}
