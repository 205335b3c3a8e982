/**
 * The numeric kernels of the model, over row-major typed arrays. Loops run with the innermost index
 * contiguous in memory for every operand. Float64Array works as well as Float32Array (the gradient
 * check runs in float64).
 */
export type FloatArray = Float32Array | Float64Array;

export const LAYER_NORM_EPS = 1e-5;
const GELU_C = Math.sqrt(2 / Math.PI);
/** `dot4`'s results in `matmulABt` (one thread: nothing runs between a write and its reads). */
const SUMS = new Float64Array(4);

export function allocLike(like: FloatArray, n: number): FloatArray {
  return like instanceof Float64Array ? new Float64Array(n) : new Float32Array(n);
}

/** out[c, r] = a[r, c] for an a of [rows, cols]. */
export function transpose(out: FloatArray, a: FloatArray, rows: number, cols: number): void {
  for (let r = 0; r < rows; r++) {
    const ro = r * cols;
    for (let c = 0; c < cols; c++) out[c * rows + r] = a[ro + c]!;
  }
}

/** Σ a[ao + p] · b[bo + p] for p < n, summed in order (every kernel sums in this order, so results agree). */
export function dot(a: FloatArray, ao: number, b: FloatArray, bo: number, n: number): number {
  let s = 0;
  for (let p = 0; p < n; p++) s += a[ao + p]! * b[bo + p]!;
  return s;
}

/**
 * out[r] = Σ_p x[x0 + r·xs + p] · y[y0 + p] for the four rows r < 4 of x, each summed over p in order:
 * `dot` for four rows against one, which loads each entry of y once.
 */
export function dot4(out: Float64Array, x: FloatArray, x0: number, xs: number, y: FloatArray, y0: number, n: number): void {
  const x1 = x0 + xs, x2 = x1 + xs, x3 = x2 + xs;
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (let p = 0; p < n; p++) {
    const u = y[y0 + p]!;
    s0 += x[x0 + p]! * u;
    s1 += x[x1 + p]! * u;
    s2 += x[x2 + p]! * u;
    s3 += x[x3 + p]! * u;
  }
  out[0] = s0;
  out[1] = s1;
  out[2] = s2;
  out[3] = s3;
}

/** dst[d0 + i] += w · y[y0 + i] for i < n. */
export function addScaled(dst: FloatArray, d0: number, w: number, y: FloatArray, y0: number, n: number): void {
  for (let i = 0; i < n; i++) dst[d0 + i]! += w * y[y0 + i]!;
}

/** `addScaled` into the four rows d0 + r·ds of dst, row r weighted by w_r. */
export function addScaled4(dst: FloatArray, d0: number, ds: number, w0: number, w1: number, w2: number, w3: number, y: FloatArray, y0: number, n: number): void {
  const d1 = d0 + ds, d2 = d1 + ds, d3 = d2 + ds;
  for (let i = 0; i < n; i++) {
    const v = y[y0 + i]!;
    dst[d0 + i]! += w0 * v;
    dst[d1 + i]! += w1 * v;
    dst[d2 + i]! += w2 * v;
    dst[d3 + i]! += w3 * v;
  }
}

/**
 * c[i, j] = init + Σ_p a[i, p] · b[j, p] for a of [m, k] and b of [n, k], where init is bias[j] (or 0)
 * or, with `accumulate`, the old c[i, j]. Blocks of 4 rows × 2 columns keep 8 sums in registers and
 * load each operand once per block; each sum still runs over p in order.
 */
export function matmulABt(
  c: FloatArray,
  a: FloatArray,
  b: FloatArray,
  m: number,
  n: number,
  k: number,
  bias: FloatArray | null,
  accumulate: boolean,
): void {
  let i = 0;
  for (; i + 3 < m; i += 4) {
    const a0 = i * k, a1 = a0 + k, a2 = a1 + k, a3 = a2 + k;
    const c0 = i * n, c1 = c0 + n, c2 = c1 + n, c3 = c2 + n;
    let j = 0;
    for (; j + 1 < n; j += 2) {
      const b0 = j * k;
      const b1 = b0 + k;
      let s00 = 0, s10 = 0, s20 = 0, s30 = 0, s01 = 0, s11 = 0, s21 = 0, s31 = 0;
      for (let p = 0; p < k; p++) {
        const u = b[b0 + p]!;
        const v = b[b1 + p]!;
        const x0 = a[a0 + p]!;
        const x1 = a[a1 + p]!;
        const x2 = a[a2 + p]!;
        const x3 = a[a3 + p]!;
        s00 += x0 * u;
        s10 += x1 * u;
        s20 += x2 * u;
        s30 += x3 * u;
        s01 += x0 * v;
        s11 += x1 * v;
        s21 += x2 * v;
        s31 += x3 * v;
      }
      if (accumulate) {
        c[c0 + j]! += s00; c[c1 + j]! += s10; c[c2 + j]! += s20; c[c3 + j]! += s30;
        c[c0 + j + 1]! += s01; c[c1 + j + 1]! += s11; c[c2 + j + 1]! += s21; c[c3 + j + 1]! += s31;
      } else {
        const z0 = bias === null ? 0 : bias[j]!;
        const z1 = bias === null ? 0 : bias[j + 1]!;
        c[c0 + j] = z0 + s00; c[c1 + j] = z0 + s10; c[c2 + j] = z0 + s20; c[c3 + j] = z0 + s30;
        c[c0 + j + 1] = z1 + s01; c[c1 + j + 1] = z1 + s11; c[c2 + j + 1] = z1 + s21; c[c3 + j + 1] = z1 + s31;
      }
    }
    for (; j < n; j++) {
      dot4(SUMS, a, a0, k, b, j * k, k);
      const s0 = SUMS[0]!, s1 = SUMS[1]!, s2 = SUMS[2]!, s3 = SUMS[3]!;
      if (accumulate) {
        c[c0 + j]! += s0; c[c1 + j]! += s1; c[c2 + j]! += s2; c[c3 + j]! += s3;
      } else {
        const z = bias === null ? 0 : bias[j]!;
        c[c0 + j] = z + s0; c[c1 + j] = z + s1; c[c2 + j] = z + s2; c[c3 + j] = z + s3;
      }
    }
  }
  for (; i < m; i++) {
    const ai = i * k;
    const ci = i * n;
    let j = 0;
    for (; j + 3 < n; j += 4) {
      dot4(SUMS, b, j * k, k, a, ai, k);
      const s0 = SUMS[0]!, s1 = SUMS[1]!, s2 = SUMS[2]!, s3 = SUMS[3]!;
      if (accumulate) {
        c[ci + j]! += s0; c[ci + j + 1]! += s1; c[ci + j + 2]! += s2; c[ci + j + 3]! += s3;
      } else if (bias === null) {
        c[ci + j] = s0; c[ci + j + 1] = s1; c[ci + j + 2] = s2; c[ci + j + 3] = s3;
      } else {
        c[ci + j] = bias[j]! + s0; c[ci + j + 1] = bias[j + 1]! + s1;
        c[ci + j + 2] = bias[j + 2]! + s2; c[ci + j + 3] = bias[j + 3]! + s3;
      }
    }
    for (; j < n; j++) {
      const sum = dot(a, ai, b, j * k, k);
      if (accumulate) c[ci + j]! += sum;
      else c[ci + j] = (bias === null ? 0 : bias[j]!) + sum;
    }
  }
}

/** y[r] = W · x[r] + b for each of `rows` rows; W is [nOut, nIn] (PyTorch's layout), `b` may be null. */
export function linearForward(
  y: FloatArray,
  x: FloatArray,
  w: FloatArray,
  b: FloatArray | null,
  rows: number,
  nIn: number,
  nOut: number,
): void {
  matmulABt(y, x, w, rows, nOut, nIn, b, false);
}

/**
 * Backward of `linearForward`: sets dx = dy · W (through `wT`, W transposed to [nIn, nOut]), and adds
 * dyᵀ · x to dW and the column sums of dy to db. `dyT`, `xT` are scratch of nOut·rows and nIn·rows.
 */
export function linearBackward(
  dx: FloatArray,
  dw: FloatArray,
  db: FloatArray | null,
  dy: FloatArray,
  x: FloatArray,
  wT: FloatArray,
  rows: number,
  nIn: number,
  nOut: number,
  dyT: FloatArray,
  xT: FloatArray,
): void {
  matmulABt(dx, dy, wT, rows, nIn, nOut, null, false);
  transpose(dyT, dy, rows, nOut);
  transpose(xT, x, rows, nIn);
  matmulABt(dw, dyT, xT, nOut, nIn, rows, null, true);
  if (db !== null) {
    for (let o = 0; o < nOut; o++) {
      const go = o * rows;
      let s = 0;
      for (let r = 0; r < rows; r++) s += dyT[go + r]!;
      db[o]! += s;
    }
  }
}

/** What a layer norm keeps of each row for its backward pass: the row's mean and 1/std. */
export interface NormStats {
  mean: FloatArray;
  rstd: FloatArray;
}

export function allocNormStats(like: FloatArray, rows: number): NormStats {
  return { mean: allocLike(like, rows), rstd: allocLike(like, rows) };
}

/** A layer norm's gain and bias (or their gradients). */
export interface NormParams {
  g: FloatArray;
  b: FloatArray;
}

/** y[r] = (x[r] - mean) / std * g + b for `rows` rows of n, keeping each row's stats for the backward pass. */
export function layerNormForward(y: FloatArray, stats: NormStats, x: FloatArray, { g, b }: NormParams, rows: number, n: number): void {
  const { mean, rstd } = stats;
  for (let r = 0; r < rows; r++) {
    const o = r * n;
    let m = 0;
    for (let i = 0; i < n; i++) m += x[o + i]!;
    m /= n;
    let v = 0;
    for (let i = 0; i < n; i++) {
      const d = x[o + i]! - m;
      v += d * d;
    }
    const rs = 1 / Math.sqrt(v / n + LAYER_NORM_EPS);
    mean[r] = m;
    rstd[r] = rs;
    for (let i = 0; i < n; i++) y[o + i] = (x[o + i]! - m) * rs * g[i]! + b[i]!;
  }
}

/** Adds the layer norm's input gradient to dx and its parameter gradients to `d` (gain g), given dy. */
export function layerNormBackward(dx: FloatArray, d: NormParams, dy: FloatArray, x: FloatArray, stats: NormStats, g: FloatArray, rows: number, n: number): void {
  const { mean, rstd } = stats;
  const { g: dg, b: db } = d;
  for (let r = 0; r < rows; r++) {
    const o = r * n;
    const m = mean[r]!;
    const rs = rstd[r]!;
    let sumD = 0;
    let sumDX = 0;
    for (let i = 0; i < n; i++) {
      const xhat = (x[o + i]! - m) * rs;
      const gy = dy[o + i]!;
      const d = gy * g[i]!;
      sumD += d;
      sumDX += d * xhat;
      dg[i]! += gy * xhat;
      db[i]! += gy;
    }
    sumD /= n;
    sumDX /= n;
    for (let i = 0; i < n; i++) {
      const xhat = (x[o + i]! - m) * rs;
      dx[o + i]! += rs * (dy[o + i]! * g[i]! - sumD - xhat * sumDX);
    }
  }
}

/** GELU, tanh form: out = 0.5 u (1 + tanh(c (u + 0.044715 u³))). */
export function geluForward(out: FloatArray, u: FloatArray, n: number): void {
  for (let i = 0; i < n; i++) {
    const x = u[i]!;
    out[i] = 0.5 * x * (1 + Math.tanh(GELU_C * (x + 0.044715 * x * x * x)));
  }
}

/** du = dOut * gelu'(u), in place over dOut. */
export function geluBackward(dOut: FloatArray, u: FloatArray, n: number): void {
  for (let i = 0; i < n; i++) {
    const x = u[i]!;
    const th = Math.tanh(GELU_C * (x + 0.044715 * x * x * x));
    const d = 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * GELU_C * (1 + 3 * 0.044715 * x * x);
    dOut[i] = dOut[i]! * d;
  }
}

/** log Σ exp(logits[off .. off+n)), in float64. */
export function logSumExp(logits: FloatArray, off: number, n: number): number {
  let max = -Infinity;
  for (let i = 0; i < n; i++) if (logits[off + i]! > max) max = logits[off + i]!;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += Math.exp(logits[off + i]! - max);
  return max + Math.log(sum);
}
