import {
  allocLike,
  allocNormStats,
  geluBackward,
  geluForward,
  layerNormBackward,
  layerNormForward,
  linearBackward,
  linearForward,
  logSumExp,
  transpose,
  type FloatArray,
  type NormStats,
} from "./kernels.ts";
import { attentionBackward, attentionForward } from "./attention.ts";
import { chainLayout, type AttentionLayout } from "./attention-layout.ts";
import type { ModelShape, ModelWeights } from "./layout.ts";

/**
 * The decoder-only transformer over one whole sequence or a packed prefix trie: token + learned position
 * embeddings, pre-norm blocks (multi-head attention over each token's path, GELU MLP), a final layer norm
 * and the output projection. `forwardLayout` keeps every activation that `backwardSequence` needs.
 */
export interface LayerActivations {
  xIn: FloatArray;
  ln1: FloatArray;
  ln1Stats: NormStats;
  qkv: FloatArray;
  /** [heads, path entries]: token t's weights over its path, from `layout.pathStart[t]`. */
  probs: FloatArray;
  att: FloatArray;
  x1: FloatArray;
  ln2: FloatArray;
  ln2Stats: NormStats;
  hPre: FloatArray;
  hAct: FloatArray;
  /**
   * The rows from the attention's output on (att, x1, ln2, hPre, hAct and the layer's output): null, every
   * token's; else these tokens' only, in this order (the last layer of a pass that wants some rows' logits).
   */
  rows: Int32Array | null;
}

export interface ForwardPass {
  ids: readonly number[];
  length: number;
  layout: AttentionLayout;
  layers: LayerActivations[];
  xOut: FloatArray;
  lnf: FloatArray;
  lnfStats: NormStats;
  /** [rows, vocab]: row `logitRow[t]` scores the token that follows token t on its path. */
  logits: FloatArray;
  /** Token t's row of `logits` (and of `xOut`, `lnf`), -1 where the pass made none. */
  logitRow: Int32Array;
}

export function forwardSequence(w: ModelWeights, shape: ModelShape, ids: readonly number[], outRows?: Int32Array): ForwardPass {
  return forwardLayout(w, shape, chainLayout(ids), outRows);
}

/**
 * The forward pass over `layout`. With `outRows` (ascending token indices), only those tokens' logits are
 * made: the last layer's attention queries, output projection, MLP and the final norm run on those rows
 * alone (every token's keys and values still feed them). Training wants no more (the rows that score a
 * trained token), and a prompt's rows are most of a sequence. Each row's numbers are the full pass's.
 */
export function forwardLayout(w: ModelWeights, shape: ModelShape, layout: AttentionLayout, outRows?: Int32Array): ForwardPass {
  const { ids } = layout;
  const T = ids.length;
  const P = layout.pathStart[T]!;
  const { dim: D, heads: H, mlpDim: M, vocabSize: V } = shape;
  const like = w.buffer;
  let x = allocLike(like, T * D);
  for (let t = 0; t < T; t++) {
    const eo = ids[t]! * D;
    const xo = t * D;
    const po = layout.positions[t]! * D;
    for (let d = 0; d < D; d++) x[xo + d] = w.tokEmb[eo + d]! + w.posEmb[po + d]!;
  }
  const layers: LayerActivations[] = [];
  let n = T;
  for (let l = 0; l < w.layers.length; l++) {
    const lw = w.layers[l]!;
    const rows = l === w.layers.length - 1 && outRows !== undefined && outRows.length < T ? outRows : null;
    n = rows ? rows.length : T;
    const a: LayerActivations = {
      xIn: x,
      ln1: allocLike(like, T * D),
      ln1Stats: allocNormStats(like, T),
      qkv: allocLike(like, T * 3 * D),
      probs: allocLike(like, H * P),
      att: allocLike(like, n * D),
      x1: allocLike(like, n * D),
      ln2: allocLike(like, n * D),
      ln2Stats: allocNormStats(like, n),
      hPre: allocLike(like, n * M),
      hAct: allocLike(like, n * M),
      rows,
    };
    layerNormForward(a.ln1, a.ln1Stats, x, { g: lw.ln1g, b: lw.ln1b }, T, D);
    linearForward(a.qkv, a.ln1, lw.wqkv, lw.bqkv, T, D, 3 * D);
    let residual = x;
    if (rows) {
      const att = allocLike(like, T * D);
      attentionForward(att, a.probs, a.qkv, layout, D, H, rowMask(rows, T));
      gatherRows(a.att, att, rows, D);
      residual = allocLike(like, n * D);
      gatherRows(residual, x, rows, D);
    } else {
      attentionForward(a.att, a.probs, a.qkv, layout, D, H);
    }
    linearForward(a.x1, a.att, lw.wo, lw.bo, n, D, D);
    for (let i = 0; i < n * D; i++) a.x1[i]! += residual[i]!;
    layerNormForward(a.ln2, a.ln2Stats, a.x1, { g: lw.ln2g, b: lw.ln2b }, n, D);
    linearForward(a.hPre, a.ln2, lw.w1, lw.b1, n, D, M);
    geluForward(a.hAct, a.hPre, n * M);
    const x2 = allocLike(like, n * D);
    linearForward(x2, a.hAct, lw.w2, lw.b2, n, M, D);
    for (let i = 0; i < n * D; i++) x2[i]! += a.x1[i]!;
    layers.push(a);
    x = x2;
  }
  const lnf = allocLike(like, n * D);
  const lnfStats = allocNormStats(like, n);
  layerNormForward(lnf, lnfStats, x, { g: w.lnfg, b: w.lnfb }, n, D);
  const logits = allocLike(like, n * V);
  linearForward(logits, lnf, w.out, null, n, D, V);
  const tail = layers.at(-1)?.rows ?? null;
  const logitRow = new Int32Array(T).fill(-1);
  if (tail) tail.forEach((t, r) => (logitRow[t] = r));
  else for (let t = 0; t < T; t++) logitRow[t] = t;
  return { ids, length: T, layout, layers, xOut: x, lnf, lnfStats, logits, logitRow };
}

/** out[r] = src[rows[r]] for rows of n entries. */
function gatherRows(out: FloatArray, src: FloatArray, rows: Int32Array, n: number): void {
  rows.forEach((t, r) => out.set(src.subarray(t * n, t * n + n), r * n));
}

/** out[rows[r]] = src[r] for rows of n entries (out's other rows are left as they are). */
function scatterRows(out: FloatArray, src: FloatArray, rows: Int32Array, n: number): void {
  rows.forEach((t, r) => out.set(src.subarray(r * n, r * n + n), t * n));
}

/** 1 at each of `rows` (token indices below T). */
function rowMask(rows: Int32Array, T: number): Uint8Array {
  const mask = new Uint8Array(T);
  for (const t of rows) mask[t] = 1;
  return mask;
}

/** The weight matrices transposed ([in, out]), for the input gradients; valid while the weights are unchanged. */
export interface TransposedWeights {
  layers: Array<{ wqkv: FloatArray; wo: FloatArray; w1: FloatArray; w2: FloatArray }>;
  out: FloatArray;
}

export function transposeWeights(w: ModelWeights, shape: ModelShape): TransposedWeights {
  const { dim: D, mlpDim: M, vocabSize: V } = shape;
  const t = (a: FloatArray, rows: number, cols: number): FloatArray => {
    const out = allocLike(a, rows * cols);
    transpose(out, a, rows, cols);
    return out;
  };
  return {
    layers: w.layers.map((l) => ({ wqkv: t(l.wqkv, 3 * D, D), wo: t(l.wo, D, D), w1: t(l.w1, M, D), w2: t(l.w2, D, M) })),
    out: t(w.out, V, D),
  };
}

/** Adds the gradient of the loss to `g` (same layout as `w`), given dLoss/dLogits ([rows of `pass.logits`, vocab]). */
export function backwardSequence(
  w: ModelWeights,
  wT: TransposedWeights,
  g: ModelWeights,
  shape: ModelShape,
  pass: ForwardPass,
  dLogits: FloatArray,
): void {
  const T = pass.length;
  const { dim: D, heads: H, mlpDim: M, vocabSize: V } = shape;
  const like = w.buffer;
  const tail = pass.layers.at(-1)?.rows ?? null;
  const R = tail ? tail.length : T;
  const widest = Math.max(3 * D, M, V);
  const dyT = allocLike(like, T * widest);
  const xT = allocLike(like, T * Math.max(D, M));
  const dLnf = allocLike(like, R * D);
  linearBackward(dLnf, g.out, null, dLogits, pass.lnf, wT.out, R, D, V, dyT, xT);
  // dx: gradient w.r.t. the residual stream at the current depth (the tail's rows until its attention).
  let dx = allocLike(like, R * D);
  layerNormBackward(dx, { g: g.lnfg, b: g.lnfb }, dLnf, pass.xOut, pass.lnfStats, w.lnfg, R, D);
  const dh = allocLike(like, T * M);
  const dTmp = allocLike(like, T * D);
  const dqkv = allocLike(like, T * 3 * D);
  for (let l = w.layers.length - 1; l >= 0; l--) {
    const lw = w.layers[l]!;
    const lt = wT.layers[l]!;
    const lg = g.layers[l]!;
    const a = pass.layers[l]!;
    const n = a.rows ? a.rows.length : T;
    // MLP: x2 = x1 + W2 gelu(W1 ln2(x1)).
    linearBackward(dh, lg.w2, lg.b2, dx, a.hAct, lt.w2, n, M, D, dyT, xT);
    geluBackward(dh, a.hPre, n * M);
    linearBackward(dTmp, lg.w1, lg.b1, dh, a.ln2, lt.w1, n, D, M, dyT, xT);
    layerNormBackward(dx, { g: lg.ln2g, b: lg.ln2b }, dTmp, a.x1, a.ln2Stats, lw.ln2g, n, D);
    // Attention: x1 = xIn + Wo attn(Wqkv ln1(xIn)).
    linearBackward(dTmp, lg.wo, lg.bo, dx, a.att, lt.wo, n, D, D, dyT, xT);
    if (a.rows) {
      // Back to every token: the rows the tail left out have no gradient.
      const dAtt = allocLike(like, T * D);
      scatterRows(dAtt, dTmp, a.rows, D);
      const dxAll = allocLike(like, T * D);
      scatterRows(dxAll, dx, a.rows, D);
      dx = dxAll;
      attentionBackward(dqkv, dAtt, a.probs, a.qkv, pass.layout, D, H);
    } else {
      attentionBackward(dqkv, dTmp, a.probs, a.qkv, pass.layout, D, H);
    }
    linearBackward(dTmp, lg.wqkv, lg.bqkv, dqkv, a.ln1, lt.wqkv, T, D, 3 * D, dyT, xT);
    layerNormBackward(dx, { g: lg.ln1g, b: lg.ln1b }, dTmp, a.xIn, a.ln1Stats, lw.ln1g, T, D);
  }
  for (let t = 0; t < T; t++) {
    const eo = pass.ids[t]! * D;
    const xo = t * D;
    const po = pass.layout.positions[t]! * D;
    for (let d = 0; d < D; d++) {
      g.tokEmb[eo + d]! += dx[xo + d]!;
      g.posEmb[po + d]! += dx[xo + d]!;
    }
  }
}

/** Log-prob of ids[t] given ids[0..t) for t >= 1 whose previous row the pass made logits for; other entries are 0. For a chain's pass. */
export function scoreSequence(pass: ForwardPass, vocab: number): number[] {
  const out = new Array<number>(pass.length).fill(0);
  for (let t = 1; t < pass.length; t++) {
    const row = pass.logitRow[t - 1]!;
    if (row < 0) continue;
    const off = row * vocab;
    out[t] = pass.logits[off + pass.ids[t]!]! - logSumExp(pass.logits, off, vocab);
  }
  return out;
}
