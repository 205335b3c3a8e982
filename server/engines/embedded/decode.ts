import { allocNormStats, dot, geluForward, layerNormForward, linearForward, type NormStats } from "./kernels.ts";
import type { ModelShape, ModelWeights } from "./layout.ts";

/**
 * Incremental decoding with a key/value cache: a chunk of new positions at a time (a whole prompt, or
 * one sampled token), the same arithmetic as `forwardSequence` in the same order, so the log-probs of a
 * generation equal a full recomputation.
 */
export class KvCache {
  /** The tokens whose keys and values are cached, position by position. */
  readonly tokens: number[] = [];
  /** Per layer: [context, dim]. */
  readonly keys: Float32Array[];
  readonly values: Float32Array[];

  constructor(readonly shape: ModelShape) {
    const n = shape.context * shape.dim;
    this.keys = Array.from({ length: shape.layers }, () => new Float32Array(n));
    this.values = Array.from({ length: shape.layers }, () => new Float32Array(n));
  }

  /** Forgets every position from `length` on. */
  truncate(length: number): void {
    this.tokens.length = Math.min(this.tokens.length, length);
  }
}

/** Scratch buffers for decoding up to `context` positions at once, reused across calls. */
export class DecodeScratch {
  readonly x: Float32Array;
  readonly ln: Float32Array;
  /** Each row's layer-norm mean and 1/std. */
  readonly stats: NormStats;
  readonly qkv: Float32Array;
  readonly att: Float32Array;
  readonly proj: Float32Array;
  readonly hPre: Float32Array;
  readonly hAct: Float32Array;
  readonly scores: Float64Array;
  readonly logits: Float32Array;

  constructor(shape: ModelShape) {
    const { dim: D, mlpDim: M, context: C } = shape;
    this.x = new Float32Array(C * D);
    this.ln = new Float32Array(C * D);
    this.stats = allocNormStats(this.x, C);
    this.qkv = new Float32Array(C * 3 * D);
    this.att = new Float32Array(C * D);
    this.proj = new Float32Array(C * D);
    this.hPre = new Float32Array(C * M);
    this.hAct = new Float32Array(C * M);
    this.scores = new Float64Array(C);
    this.logits = new Float32Array(shape.vocabSize);
  }
}

/**
 * Feeds `tokens` at the next positions of `cache`. When `wantLogits`, the scores of the token after the
 * last one are left in `scratch.logits`.
 */
export function decodeTokens(
  w: ModelWeights,
  shape: ModelShape,
  cache: KvCache,
  scratch: DecodeScratch,
  tokens: readonly number[],
  wantLogits: boolean,
): void {
  const n = tokens.length;
  if (n === 0) return;
  const { dim: D, heads: H, mlpDim: M, vocabSize: V } = shape;
  const start = cache.tokens.length;
  const hd = D / H;
  const scale = 1 / Math.sqrt(hd);
  const { x, ln, stats, qkv, att, proj, hPre, hAct, scores } = scratch;
  for (let r = 0; r < n; r++) {
    const eo = tokens[r]! * D;
    const po = (start + r) * D;
    const xo = r * D;
    for (let d = 0; d < D; d++) x[xo + d] = w.tokEmb[eo + d]! + w.posEmb[po + d]!;
  }
  for (let l = 0; l < w.layers.length; l++) {
    const lw = w.layers[l]!;
    const keys = cache.keys[l]!;
    const values = cache.values[l]!;
    layerNormForward(ln, stats, x, { g: lw.ln1g, b: lw.ln1b }, n, D);
    linearForward(qkv, ln, lw.wqkv, lw.bqkv, n, D, 3 * D);
    for (let r = 0; r < n; r++) {
      const po = (start + r) * D;
      const qo = r * 3 * D;
      for (let d = 0; d < D; d++) {
        keys[po + d] = qkv[qo + D + d]!;
        values[po + d] = qkv[qo + 2 * D + d]!;
      }
    }
    // The last layer's keys and values are all the later positions need of its rows; the rest of it runs
    // for the row whose logits are wanted (the last) or for none.
    const r0 = l < w.layers.length - 1 ? 0 : wantLogits ? n - 1 : n;
    const m = n - r0;
    if (m === 0) continue;
    att.fill(0, r0 * D, n * D);
    for (let r = r0; r < n; r++) {
      const pos = start + r;
      for (let h = 0; h < H; h++) {
        const qo = r * 3 * D + h * hd;
        const ho = h * hd;
        let max = -Infinity;
        for (let s = 0; s <= pos; s++) {
          // Rounded through float32 like the full pass stores its scores.
          const sc = Math.fround(dot(qkv, qo, keys, s * D + ho, hd) * scale);
          scores[s] = sc;
          if (sc > max) max = sc;
        }
        let sum = 0;
        for (let s = 0; s <= pos; s++) {
          const e = Math.fround(Math.exp(scores[s]! - max));
          scores[s] = e;
          sum += e;
        }
        const inv = 1 / sum;
        const ao = r * D + ho;
        for (let s = 0; s <= pos; s++) {
          const p = Math.fround(scores[s]! * inv);
          const vs = s * D + ho;
          for (let j = 0; j < hd; j++) att[ao + j]! += p * values[vs + j]!;
        }
      }
    }
    // Rows r0.. of each buffer (all of them but in the last layer).
    const xs = x.subarray(r0 * D);
    const lns = ln.subarray(r0 * D);
    const projs = proj.subarray(r0 * D);
    linearForward(projs, att.subarray(r0 * D), lw.wo, lw.bo, m, D, D);
    for (let i = 0; i < m * D; i++) xs[i]! += projs[i]!;
    layerNormForward(lns, { mean: stats.mean.subarray(r0), rstd: stats.rstd.subarray(r0) }, xs, { g: lw.ln2g, b: lw.ln2b }, m, D);
    linearForward(hPre, lns, lw.w1, lw.b1, m, D, M);
    geluForward(hAct, hPre, m * M);
    linearForward(projs, hAct, lw.w2, lw.b2, m, M, D);
    for (let i = 0; i < m * D; i++) xs[i]! += projs[i]!;
  }
  for (const t of tokens) cache.tokens.push(t);
  if (!wantLogits) return;
  const last = x.subarray((n - 1) * D, n * D);
  layerNormForward(ln, stats, last, { g: w.lnfg, b: w.lnfb }, 1, D);
  linearForward(scratch.logits, ln, w.out, null, 1, D, V);
}
