import { EmbeddedConfigError } from "./errors.ts";
import type { FloatArray } from "./kernels.ts";
import { Rng } from "./rng.ts";

/** The shape of the model: what a checkpoint must match. */
export interface ModelShape {
  vocabSize: number;
  layers: number;
  dim: number;
  heads: number;
  /** Longest sequence (learned position embeddings). */
  context: number;
  /** Hidden width of each MLP. */
  mlpDim: number;
  /** Whether the output projection is the token embedding (tied) or its own matrix. */
  tiedOutput: boolean;
}

export interface TensorSpec {
  name: string;
  shape: number[];
  offset: number;
  size: number;
}

/** All parameters live in one flat buffer; a layout names the slices. */
export interface ParamLayout {
  shape: ModelShape;
  tensors: TensorSpec[];
  size: number;
}

export interface LayerWeights {
  ln1g: FloatArray;
  ln1b: FloatArray;
  /** [3·dim, dim]: query, key and value projections stacked (matrices are [out, in]). */
  wqkv: FloatArray;
  bqkv: FloatArray;
  /** [dim, dim] */
  wo: FloatArray;
  bo: FloatArray;
  ln2g: FloatArray;
  ln2b: FloatArray;
  /** [mlpDim, dim] */
  w1: FloatArray;
  b1: FloatArray;
  /** [dim, mlpDim] */
  w2: FloatArray;
  b2: FloatArray;
}

/** Views of one flat buffer (weights, or gradients in the same layout). */
export interface ModelWeights {
  /** [vocab, dim] */
  tokEmb: FloatArray;
  /** [context, dim] */
  posEmb: FloatArray;
  layers: LayerWeights[];
  lnfg: FloatArray;
  lnfb: FloatArray;
  /** [vocab, dim]: `tokEmb` itself when tied. */
  out: FloatArray;
  buffer: FloatArray;
}

const LAYER_TENSORS = ["ln1g", "ln1b", "wqkv", "bqkv", "wo", "bo", "ln2g", "ln2b", "w1", "b1", "w2", "b2"] as const;

export function validateShape(shape: ModelShape): void {
  for (const k of ["vocabSize", "layers", "dim", "heads", "context", "mlpDim"] as const) {
    if (!Number.isInteger(shape[k]) || shape[k] < 1) throw new EmbeddedConfigError(`${k} must be a positive integer`);
  }
  if (shape.dim % shape.heads !== 0) {
    throw new EmbeddedConfigError(`dim ${shape.dim} is not divisible by heads ${shape.heads}`);
  }
}

export function createLayout(shape: ModelShape): ParamLayout {
  validateShape(shape);
  const { vocabSize: v, dim: d, context: t, mlpDim: m } = shape;
  const tensors: TensorSpec[] = [];
  let offset = 0;
  const add = (name: string, dims: number[]): void => {
    const size = dims.reduce((a, b) => a * b, 1);
    tensors.push({ name, shape: dims, offset, size });
    offset += size;
  };
  add("tokEmb", [v, d]);
  add("posEmb", [t, d]);
  const layerShapes: Record<(typeof LAYER_TENSORS)[number], number[]> = {
    ln1g: [d], ln1b: [d], wqkv: [3 * d, d], bqkv: [3 * d], wo: [d, d], bo: [d],
    ln2g: [d], ln2b: [d], w1: [m, d], b1: [m], w2: [d, m], b2: [d],
  };
  for (let l = 0; l < shape.layers; l++) {
    for (const name of LAYER_TENSORS) add(`layers.${l}.${name}`, layerShapes[name]);
  }
  add("lnfg", [d]);
  add("lnfb", [d]);
  if (!shape.tiedOutput) add("out", [v, d]);
  return { shape, tensors, size: offset };
}

export function viewWeights(layout: ParamLayout, buffer: FloatArray): ModelWeights {
  const byName = new Map<string, FloatArray>();
  for (const t of layout.tensors) byName.set(t.name, buffer.subarray(t.offset, t.offset + t.size));
  const get = (name: string): FloatArray => byName.get(name)!;
  const layers: LayerWeights[] = [];
  for (let l = 0; l < layout.shape.layers; l++) {
    const p = `layers.${l}.`;
    layers.push({
      ln1g: get(`${p}ln1g`), ln1b: get(`${p}ln1b`), wqkv: get(`${p}wqkv`), bqkv: get(`${p}bqkv`),
      wo: get(`${p}wo`), bo: get(`${p}bo`), ln2g: get(`${p}ln2g`), ln2b: get(`${p}ln2b`),
      w1: get(`${p}w1`), b1: get(`${p}b1`), w2: get(`${p}w2`), b2: get(`${p}b2`),
    });
  }
  const tokEmb = get("tokEmb");
  return {
    tokEmb,
    posEmb: get("posEmb"),
    layers,
    lnfg: get("lnfg"),
    lnfb: get("lnfb"),
    out: layout.shape.tiedOutput ? tokEmb : get("out"),
    buffer,
  };
}

/**
 * GPT-2 style initialisation: normal(0, 0.02) matrices, residual projections scaled by 1/sqrt(2·layers),
 * unit layer-norm gains, zero biases. `std` overrides the base scale (the gradient check wants larger weights).
 */
export function initWeights(layout: ParamLayout, buffer: FloatArray, seed: number, std = 0.02): void {
  const rng = new Rng(seed);
  const residualStd = std / Math.sqrt(2 * layout.shape.layers);
  for (const t of layout.tensors) {
    const leaf = t.name.slice(t.name.lastIndexOf(".") + 1);
    const view = buffer.subarray(t.offset, t.offset + t.size);
    if (leaf.endsWith("g") && leaf.startsWith("ln")) view.fill(1);
    else if (t.shape.length === 1) view.fill(0);
    else {
      const s = leaf === "wo" || leaf === "w2" ? residualStd : std;
      for (let i = 0; i < t.size; i++) view[i] = rng.gaussian() * s;
    }
  }
}
