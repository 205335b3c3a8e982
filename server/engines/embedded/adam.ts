import type { FloatArray } from "./kernels.ts";

export interface AdamParams {
  lr: number;
  beta1: number;
  beta2: number;
  /** Decoupled (AdamW) decay, applied to every parameter. */
  weightDecay: number;
  eps?: number;
}

/** First and second moments in the parameters' layout, and the step count for bias correction. */
export interface AdamState {
  m: Float32Array;
  v: Float32Array;
  step: number;
}

export function createAdamState(size: number): AdamState {
  return { m: new Float32Array(size), v: new Float32Array(size), step: 0 };
}

/** One bias-corrected Adam step of `params` along `grads`. */
export function applyAdam(params: FloatArray, grads: FloatArray, state: AdamState, p: AdamParams): void {
  state.step++;
  const { lr, beta1, beta2, weightDecay } = p;
  const eps = p.eps ?? 1e-8;
  const c1 = 1 / (1 - Math.pow(beta1, state.step));
  const c2 = 1 / (1 - Math.pow(beta2, state.step));
  const { m, v } = state;
  const decay = 1 - lr * weightDecay;
  for (let i = 0; i < params.length; i++) {
    const g = grads[i]!;
    const mi = beta1 * m[i]! + (1 - beta1) * g;
    const vi = beta2 * v[i]! + (1 - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    params[i] = params[i]! * decay - (lr * (mi * c1)) / (Math.sqrt(vi * c2) + eps);
  }
}

/** Scales `grads` so that their global L2 norm is at most `maxNorm`; returns the norm before clipping. */
export function clipGradNorm(grads: FloatArray, maxNorm: number): number {
  let sq = 0;
  for (let i = 0; i < grads.length; i++) sq += grads[i]! * grads[i]!;
  const norm = Math.sqrt(sq);
  if (norm > maxNorm && norm > 0) {
    const s = maxNorm / norm;
    for (let i = 0; i < grads.length; i++) grads[i] = grads[i]! * s;
  }
  return norm;
}
