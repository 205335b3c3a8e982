import { describe, expect, it } from "vitest";
import {
  Rng,
  accumulateSample,
  accumulateTree,
  countLossTokens,
  createLayout,
  createLossTotals,
  forwardSequence,
  initWeights,
  packTreeBatch,
  scoreReference,
  scoreReferenceTree,
  scoreSequence,
  transposeWeights,
  treeBudget,
  viewWeights,
  type ModelShape,
  type ModelWeights,
} from "../../../../server/engines/embedded/index.ts";
import type { TrainSample } from "../../../../server/training/sample.ts";

// The check runs the real loss and backward code in float64, so central differences are accurate to ~1e-9.
const PARAMS = { clipEps: 0.2, klCoef: 0.1 };

function perturb(buf: Float64Array, rng: Rng, scale: number): void {
  for (let i = 0; i < buf.length; i++) buf[i] = buf[i]! + rng.gaussian() * scale;
}

type Path = "flat" | "tree";

function batchLoss(path: Path, w: ModelWeights, grads: ModelWeights, shape: ModelShape, samples: TrainSample[], ref: ModelWeights): number {
  const tokens = samples.reduce((n, s) => n + countLossTokens(s), 0);
  const totals = createLossTotals();
  const wT = transposeWeights(w, shape);
  if (path === "tree") {
    for (const p of packTreeBatch(samples, treeBudget(shape))) {
      accumulateTree(w, wT, grads, shape, p, scoreReferenceTree(ref, shape, p), tokens, PARAMS, totals);
    }
    return totals.loss;
  }
  for (const s of samples) {
    accumulateSample(w, wT, grads, shape, s, scoreReference(ref, shape, s), tokens, PARAMS, totals);
  }
  return totals.loss;
}

function makeSamples(w: ModelWeights, shape: ModelShape, rng: Rng): TrainSample[] {
  const specs = [
    { length: 9, advantage: 1.3, weight: 1 },
    { length: 6, advantage: -0.7, weight: 0.5 },
    { length: 12, advantage: 0.4, weight: 2 },
  ];
  // The third sample branches from the first after 5 tokens: the tree path shares that prefix.
  const first: number[] = [];
  return specs.map(({ length, advantage, weight }, k) => {
    const tokenIds = Array.from({ length }, (_, t) => (k === 2 && t < 5 ? first[t]! : Math.floor(rng.next() * shape.vocabSize)));
    if (k === 0) first.push(...tokenIds);
    const lossMask = tokenIds.map((_, t) => (t > 0 && rng.next() < 0.7 ? 1 : 0));
    const current = scoreSequence(forwardSequence(w, shape, tokenIds), shape.vocabSize);
    // Behaviour log-probs near the current ones: most ratios inside the clip range, some outside.
    const logprobs = current.map((lp, t) => (lossMask[t] === 1 ? lp + rng.gaussian() * 0.15 : 0));
    return { tokenIds, lossMask, logprobs, advantage, weight };
  });
}

describe.each([
  [true, "flat"],
  [false, "flat"],
  [true, "tree"],
  [false, "tree"],
] as const)("embedded gradients (tiedOutput %s, %s path)", (tiedOutput, path) => {
  it("match central finite differences in every tensor", () => {
    const shape: ModelShape = { vocabSize: 11, layers: 2, dim: 8, heads: 2, context: 12, mlpDim: 16, tiedOutput };
    const layout = createLayout(shape);
    const rng = new Rng(3);
    const buf = new Float64Array(layout.size);
    initWeights(layout, buf, 5, 0.3);
    perturb(buf, rng, 0.1);
    const refBuf = buf.slice();
    perturb(refBuf, rng, 0.05);
    const w = viewWeights(layout, buf);
    const ref = viewWeights(layout, refBuf);
    const grads = viewWeights(layout, new Float64Array(layout.size));
    const scratch = viewWeights(layout, new Float64Array(layout.size));
    const samples = makeSamples(w, shape, rng);
    batchLoss(path, w, grads, shape, samples, ref);
    if (path === "tree") expect(packTreeBatch(samples, treeBudget(shape))[0]!.layout.ids.length).toBeLessThanOrEqual(9 + 6 + 12 - 5);

    const h = 1e-5;
    let checked = 0;
    for (const t of layout.tensors) {
      for (let k = 0; k < 5; k++) {
        const i = t.offset + Math.floor(rng.next() * t.size);
        const orig = buf[i]!;
        buf[i] = orig + h;
        const up = batchLoss(path, w, scratch, shape, samples, ref);
        buf[i] = orig - h;
        const down = batchLoss(path, w, scratch, shape, samples, ref);
        buf[i] = orig;
        const numeric = (up - down) / (2 * h);
        const analytic = grads.buffer[i]!;
        const err = Math.abs(analytic - numeric);
        expect(err, `${t.name}[${i - t.offset}] analytic ${analytic} numeric ${numeric}`).toBeLessThan(
          1e-7 + 1e-5 * Math.max(Math.abs(analytic), Math.abs(numeric)),
        );
        checked++;
      }
    }
    expect(checked).toBe(layout.tensors.length * 5);
    // The gradient is not trivially zero anywhere it should flow.
    let norm = 0;
    for (let i = 0; i < layout.size; i++) norm += grads.buffer[i]! ** 2;
    expect(Math.sqrt(norm)).toBeGreaterThan(1e-3);
  });
});
