import type { AttentionLayout } from "./attention-layout.ts";
import type { FloatArray } from "./kernels.ts";

/**
 * Multi-head softmax attention over each token's path (an `AttentionLayout`), forward and backward, with
 * q, k, v packed in `qkv` ([tokens, 3·dim]). Queries go in blocks of four consecutive tokens of a segment:
 * the keys they all see (the segment's ancestor ranges and the segment up to the block's first token) are
 * walked once for the four, so each key row is loaded once per block; the few keys inside the block go
 * query by query. Every per-query sum (a score, the softmax, the mix of values) runs over the keys in path
 * order, so a token's result does not depend on the block it falls in.
 */

const BLOCK = 4;

/** out = attention(qkv); `probs` ([heads, path entries]) keeps each token's weights over its path. */
export function attentionForward(out: FloatArray, probs: FloatArray, qkv: FloatArray, layout: AttentionLayout, D: number, H: number): void {
  const { pathStart, positions, segmentStart, rangeStart, ranges } = layout;
  const P = pathStart[pathStart.length - 1]!;
  const hd = D / H;
  const scale = 1 / Math.sqrt(hd);
  const S = 3 * D;
  out.fill(0);
  for (let h = 0; h < H; h++) {
    const qo = h * hd;
    const ko = D + h * hd;
    const vo = 2 * D + h * hd;
    const rowBase = h * P;
    for (let s = 0; s + 1 < segmentStart.length; s++) {
      const first = segmentStart[s]!;
      const end = segmentStart[s + 1]!;
      const r0 = rangeStart[s]!;
      const r1 = rangeStart[s + 1]!;
      for (let t0 = first; t0 < end; t0 += BLOCK) {
        const u = Math.min(BLOCK, end - t0);
        // Keys every query of the block sees: the ancestor ranges, then first..t0 (r === r1).
        const shared = u === BLOCK ? positions[t0]! + 1 : 0;
        if (shared > 0) {
          const e0 = rowBase + pathStart[t0]!;
          const e1 = rowBase + pathStart[t0 + 1]!;
          const e2 = rowBase + pathStart[t0 + 2]!;
          const e3 = rowBase + pathStart[t0 + 3]!;
          let j = 0;
          for (let r = r0; r <= r1; r++) {
            const a = r < r1 ? ranges[2 * r]! : first;
            const b = r < r1 ? ranges[2 * r + 1]! : t0 + 1;
            score4(probs, e0 + j, e1 + j, e2 + j, e3 + j, qkv, t0 * S + qo, S, ko, a, b, hd, scale);
            j += b - a;
          }
        }
        for (let q = t0; q < t0 + u; q++) {
          const e = rowBase + pathStart[q]!;
          const qt = q * S + qo;
          if (shared > 0) score1(probs, e + shared, qkv, qt, S, ko, t0 + 1, q + 1, hd, scale);
          else {
            let j = 0;
            for (let r = r0; r <= r1; r++) {
              const a = r < r1 ? ranges[2 * r]! : first;
              const b = r < r1 ? ranges[2 * r + 1]! : q + 1;
              score1(probs, e + j, qkv, qt, S, ko, a, b, hd, scale);
              j += b - a;
            }
          }
          softmaxInPlace(probs, e, positions[q]! + 1);
        }
        if (shared > 0) {
          const e0 = rowBase + pathStart[t0]!;
          const e1 = rowBase + pathStart[t0 + 1]!;
          const e2 = rowBase + pathStart[t0 + 2]!;
          const e3 = rowBase + pathStart[t0 + 3]!;
          const o = t0 * D + h * hd;
          let j = 0;
          for (let r = r0; r <= r1; r++) {
            const a = r < r1 ? ranges[2 * r]! : first;
            const b = r < r1 ? ranges[2 * r + 1]! : t0 + 1;
            mix4(out, o, D, probs, e0 + j, e1 + j, e2 + j, e3 + j, qkv, S, vo, a, b, hd);
            j += b - a;
          }
        }
        for (let q = t0; q < t0 + u; q++) {
          const e = rowBase + pathStart[q]!;
          const o = q * D + h * hd;
          if (shared > 0) mix1(out, o, probs, e + shared, qkv, S, vo, t0 + 1, q + 1, hd);
          else {
            let j = 0;
            for (let r = r0; r <= r1; r++) {
              const a = r < r1 ? ranges[2 * r]! : first;
              const b = r < r1 ? ranges[2 * r + 1]! : q + 1;
              mix1(out, o, probs, e + j, qkv, S, vo, a, b, hd);
              j += b - a;
            }
          }
        }
      }
    }
  }
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
  const { pathStart, positions, segmentStart, rangeStart, ranges } = layout;
  const P = pathStart[pathStart.length - 1]!;
  const hd = D / H;
  const scale = 1 / Math.sqrt(hd);
  const S = 3 * D;
  let stride = 0;
  for (let t = 0; t < positions.length; t++) stride = Math.max(stride, positions[t]! + 1);
  // dp[q, j] = dOut_q · v_j for the block's queries, `stride` apart.
  const dp = new Float64Array(BLOCK * stride);
  const sums = new Float64Array(BLOCK);
  dqkv.fill(0);
  for (let h = 0; h < H; h++) {
    const qo = h * hd;
    const ko = D + h * hd;
    const vo = 2 * D + h * hd;
    const rowBase = h * P;
    for (let s = 0; s + 1 < segmentStart.length; s++) {
      const first = segmentStart[s]!;
      const end = segmentStart[s + 1]!;
      const r0 = rangeStart[s]!;
      const r1 = rangeStart[s + 1]!;
      for (let t0 = first; t0 < end; t0 += BLOCK) {
        const u = Math.min(BLOCK, end - t0);
        const o0 = t0 * D + h * hd;
        // A query whose output has no gradient (no loss reads it: in the last layer, a token whose next
        // token is not trained) adds nothing; a block of them is skipped.
        if (isZero(dOut, o0, u, D, hd)) continue;
        const shared = u === BLOCK ? positions[t0]! + 1 : 0;
        // dp[q, j] = dOut_q · v_j, dv_j += p[q, j] dOut_q, sums[q] = Σ_j p[q, j] dp[q, j].
        sums.fill(0);
        if (shared > 0) {
          let j = 0;
          for (let r = r0; r <= r1; r++) {
            const a = r < r1 ? ranges[2 * r]! : first;
            const b = r < r1 ? ranges[2 * r + 1]! : t0 + 1;
            backValues4(dqkv, dp, j, stride, sums, probs, rowBase, pathStart, t0, dOut, o0, D, qkv, S, vo, a, b, hd);
            j += b - a;
          }
        }
        for (let k = 0; k < u; k++) {
          const q = t0 + k;
          const e = rowBase + pathStart[q]!;
          const o = q * D + h * hd;
          if (shared > 0) sums[k] = sums[k]! + backValues1(dqkv, dp, k * stride + shared, probs, e + shared, dOut, o, qkv, S, vo, t0 + 1, q + 1, hd);
          else {
            let j = 0;
            for (let r = r0; r <= r1; r++) {
              const a = r < r1 ? ranges[2 * r]! : first;
              const b = r < r1 ? ranges[2 * r + 1]! : q + 1;
              sums[k] = sums[k]! + backValues1(dqkv, dp, k * stride + j, probs, e + j, dOut, o, qkv, S, vo, a, b, hd);
              j += b - a;
            }
          }
        }
        // ds[q, j] = p[q, j] (dp[q, j] - sums[q]) scale; dq_q += ds k_j, dk_j += ds q_q.
        if (shared > 0) {
          let j = 0;
          for (let r = r0; r <= r1; r++) {
            const a = r < r1 ? ranges[2 * r]! : first;
            const b = r < r1 ? ranges[2 * r + 1]! : t0 + 1;
            backKeys4(dqkv, dp, j, stride, sums, probs, rowBase, pathStart, t0, qkv, S, qo, ko, a, b, hd, scale);
            j += b - a;
          }
        }
        for (let k = 0; k < u; k++) {
          const q = t0 + k;
          const e = rowBase + pathStart[q]!;
          const qt = q * S + qo;
          if (shared > 0) backKeys1(dqkv, dp, k * stride + shared, sums[k]!, probs, e + shared, qkv, qt, S, ko, t0 + 1, q + 1, hd, scale);
          else {
            let j = 0;
            for (let r = r0; r <= r1; r++) {
              const a = r < r1 ? ranges[2 * r]! : first;
              const b = r < r1 ? ranges[2 * r + 1]! : q + 1;
              backKeys1(dqkv, dp, k * stride + j, sums[k]!, probs, e + j, qkv, qt, S, ko, a, b, hd, scale);
              j += b - a;
            }
          }
        }
      }
    }
  }
}

/** Whether rows o, o + D, .. (`rows` of them) of `x` are zero over `n` entries. */
function isZero(x: FloatArray, o: number, rows: number, D: number, n: number): boolean {
  for (let r = 0; r < rows; r++) {
    for (let i = 0; i < n; i++) if (x[o + r * D + i] !== 0) return false;
  }
  return true;
}

/** probs[e + key - a] = q · k_key · scale for keys a..b. */
function score1(probs: FloatArray, e: number, qkv: FloatArray, qt: number, S: number, ko: number, a: number, b: number, hd: number, scale: number): void {
  for (let key = a; key < b; key++) {
    const ks = key * S + ko;
    let s = 0;
    for (let i = 0; i < hd; i++) s += qkv[qt + i]! * qkv[ks + i]!;
    probs[e++] = s * scale;
  }
}

/** `score1` for the four queries from row `t` (offset `qt`), writing at e0..e3. */
function score4(
  probs: FloatArray,
  e0: number,
  e1: number,
  e2: number,
  e3: number,
  qkv: FloatArray,
  qt: number,
  S: number,
  ko: number,
  a: number,
  b: number,
  hd: number,
  scale: number,
): void {
  const q0 = qt;
  const q1 = q0 + S;
  const q2 = q1 + S;
  const q3 = q2 + S;
  for (let key = a; key < b; key++) {
    const ks = key * S + ko;
    let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (let i = 0; i < hd; i++) {
      const k = qkv[ks + i]!;
      s0 += qkv[q0 + i]! * k;
      s1 += qkv[q1 + i]! * k;
      s2 += qkv[q2 + i]! * k;
      s3 += qkv[q3 + i]! * k;
    }
    probs[e0++] = s0 * scale;
    probs[e1++] = s1 * scale;
    probs[e2++] = s2 * scale;
    probs[e3++] = s3 * scale;
  }
}

function softmaxInPlace(x: FloatArray, e: number, n: number): void {
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

/** out[o ..] += Σ p_key v_key over keys a..b, the weights from probs[e ..]. */
function mix1(out: FloatArray, o: number, probs: FloatArray, e: number, qkv: FloatArray, S: number, vo: number, a: number, b: number, hd: number): void {
  for (let key = a; key < b; key++) {
    const p = probs[e++]!;
    const vs = key * S + vo;
    for (let i = 0; i < hd; i++) out[o + i]! += p * qkv[vs + i]!;
  }
}

/** `mix1` for the four consecutive rows from `o` (stride D). */
function mix4(
  out: FloatArray,
  o: number,
  D: number,
  probs: FloatArray,
  e0: number,
  e1: number,
  e2: number,
  e3: number,
  qkv: FloatArray,
  S: number,
  vo: number,
  a: number,
  b: number,
  hd: number,
): void {
  const o0 = o;
  const o1 = o0 + D;
  const o2 = o1 + D;
  const o3 = o2 + D;
  for (let key = a; key < b; key++) {
    const p0 = probs[e0++]!;
    const p1 = probs[e1++]!;
    const p2 = probs[e2++]!;
    const p3 = probs[e3++]!;
    const vs = key * S + vo;
    for (let i = 0; i < hd; i++) {
      const v = qkv[vs + i]!;
      out[o0 + i]! += p0 * v;
      out[o1 + i]! += p1 * v;
      out[o2 + i]! += p2 * v;
      out[o3 + i]! += p3 * v;
    }
  }
}

/** For keys a..b: dp[d ..] = dOut_o · v_key, dv_key += p dOut_o; returns Σ p · dp. */
function backValues1(
  dqkv: FloatArray,
  dp: Float64Array,
  d: number,
  probs: FloatArray,
  e: number,
  dOut: FloatArray,
  o: number,
  qkv: FloatArray,
  S: number,
  vo: number,
  a: number,
  b: number,
  hd: number,
): number {
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

/** `backValues1` for the four rows from t0 (dOut rows from o0, stride D), dp rows `stride` apart, adding to sums[0..3]. */
function backValues4(
  dqkv: FloatArray,
  dp: Float64Array,
  j: number,
  stride: number,
  sums: Float64Array,
  probs: FloatArray,
  rowBase: number,
  pathStart: Int32Array,
  t0: number,
  dOut: FloatArray,
  o0: number,
  D: number,
  qkv: FloatArray,
  S: number,
  vo: number,
  a: number,
  b: number,
  hd: number,
): void {
  let e0 = rowBase + pathStart[t0]! + j;
  let e1 = rowBase + pathStart[t0 + 1]! + j;
  let e2 = rowBase + pathStart[t0 + 2]! + j;
  let e3 = rowBase + pathStart[t0 + 3]! + j;
  let d = j;
  const o1 = o0 + D;
  const o2 = o1 + D;
  const o3 = o2 + D;
  let m0 = sums[0]!, m1 = sums[1]!, m2 = sums[2]!, m3 = sums[3]!;
  for (let key = a; key < b; key++) {
    const vs = key * S + vo;
    const p0 = probs[e0++]!;
    const p1 = probs[e1++]!;
    const p2 = probs[e2++]!;
    const p3 = probs[e3++]!;
    let x0 = 0, x1 = 0, x2 = 0, x3 = 0;
    for (let i = 0; i < hd; i++) {
      const v = qkv[vs + i]!;
      const g0 = dOut[o0 + i]!;
      const g1 = dOut[o1 + i]!;
      const g2 = dOut[o2 + i]!;
      const g3 = dOut[o3 + i]!;
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

/** For keys a..b: ds = p (dp - sum) scale; dq_qt += ds k_key, dk_key += ds q_qt. */
function backKeys1(
  dqkv: FloatArray,
  dp: Float64Array,
  d: number,
  sum: number,
  probs: FloatArray,
  e: number,
  qkv: FloatArray,
  qt: number,
  S: number,
  ko: number,
  a: number,
  b: number,
  hd: number,
  scale: number,
): void {
  for (let key = a; key < b; key++) {
    const ds = probs[e++]! * (dp[d++]! - sum) * scale;
    const ks = key * S + ko;
    for (let i = 0; i < hd; i++) {
      dqkv[qt + i]! += ds * qkv[ks + i]!;
      dqkv[ks + i]! += ds * qkv[qt + i]!;
    }
  }
}

/** `backKeys1` for the four rows from t0. */
function backKeys4(
  dqkv: FloatArray,
  dp: Float64Array,
  j: number,
  stride: number,
  sums: Float64Array,
  probs: FloatArray,
  rowBase: number,
  pathStart: Int32Array,
  t0: number,
  qkv: FloatArray,
  S: number,
  qo: number,
  ko: number,
  a: number,
  b: number,
  hd: number,
  scale: number,
): void {
  let e0 = rowBase + pathStart[t0]! + j;
  let e1 = rowBase + pathStart[t0 + 1]! + j;
  let e2 = rowBase + pathStart[t0 + 2]! + j;
  let e3 = rowBase + pathStart[t0 + 3]! + j;
  let d = j;
  const m0 = sums[0]!, m1 = sums[1]!, m2 = sums[2]!, m3 = sums[3]!;
  const q0 = t0 * S + qo;
  const q1 = q0 + S;
  const q2 = q1 + S;
  const q3 = q2 + S;
  for (let key = a; key < b; key++) {
    const s0 = probs[e0++]! * (dp[d]! - m0) * scale;
    const s1 = probs[e1++]! * (dp[d + stride]! - m1) * scale;
    const s2 = probs[e2++]! * (dp[d + 2 * stride]! - m2) * scale;
    const s3 = probs[e3++]! * (dp[d + 3 * stride]! - m3) * scale;
    d++;
    const ks = key * S + ko;
    for (let i = 0; i < hd; i++) {
      const k = qkv[ks + i]!;
      dqkv[q0 + i]! += s0 * k;
      dqkv[q1 + i]! += s1 * k;
      dqkv[q2 + i]! += s2 * k;
      dqkv[q3 + i]! += s3 * k;
      dqkv[ks + i]! += s0 * qkv[q0 + i]! + s1 * qkv[q1 + i]! + s2 * qkv[q2 + i]! + s3 * qkv[q3 + i]!;
    }
  }
}
