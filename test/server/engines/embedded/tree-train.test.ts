import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EmbeddedModelSchema, OptimizerSchema } from "../../../../server/config/run-config.ts";
import {
  Rng,
  accumulateSample,
  accumulateTree,
  countLossTokens,
  createEmbeddedEngine,
  createLayout,
  createLossTotals,
  initWeights,
  packTreeBatch,
  readLayoutPath,
  scoreReference,
  scoreReferenceTree,
  transposeWeights,
  treeBudget,
  viewWeights,
  type LossTotals,
  type ModelShape,
  type ModelWeights,
} from "../../../../server/engines/embedded/index.ts";
import { createEmbeddedTokenizer } from "../../../../server/tokenizers/embedded.ts";
import { mergeTimelines } from "../../../../server/training/merge-timelines.ts";
import type { TrieBudget } from "../../../../server/training/prefix-tree.ts";
import type { TrainSample } from "../../../../server/training/sample.ts";
import { recordEpisode, type ScriptStep, type StepKind } from "../../training/helpers/record-episode.ts";

/**
 * Tree training is the flat batch computed once per shared prefix: on random branching timelines
 * (n > 1 branches from one prompt, retried calls, truncated histories, a sample that is another's
 * prefix, duplicates), loss, gradients and the weights after a step equal the flat samples'.
 */

const SHAPE: ModelShape = { vocabSize: 11, layers: 2, dim: 8, heads: 2, context: 24, mlpDim: 16, tiedOutput: true };

/** How a sample starts: fresh, from the shared prompt (a branch), or from a cut of an earlier sample (a retry). */
const sampleSpec = fc.record({
  base: fc.constantFrom("prompt", "prompt", "earlier", "earlier", "truncated", "duplicate", "fresh"),
  pick: fc.nat(),
  cut: fc.nat(),
  tail: fc.array(fc.integer({ min: 0, max: 10 }), { minLength: 0, maxLength: 8 }),
  maskBits: fc.array(fc.boolean(), { minLength: 24, maxLength: 24 }),
  drift: fc.array(fc.double({ min: -0.4, max: 0.4, noNaN: true }), { minLength: 24, maxLength: 24 }),
  advantage: fc.double({ min: -2, max: 2, noNaN: true }),
  weight: fc.constantFrom(0.5, 1, 2),
});

const batchSpec = fc.record({
  prompt: fc.array(fc.integer({ min: 0, max: 10 }), { minLength: 1, maxLength: 8 }),
  samples: fc.array(sampleSpec, { minLength: 1, maxLength: 9 }),
  // Tries from one sample each (splitting every shared prefix) to the whole batch in one.
  budget: fc.record({ nodeCost: fc.constantFrom(0, 3, 40), maxCost: fc.integer({ min: 1, max: 4000 }) }),
  kl: fc.boolean(),
  supervised: fc.boolean(),
  seed: fc.nat(1000),
});

type BatchSpec = typeof batchSpec extends fc.Arbitrary<infer T> ? T : never;

function buildSamples(spec: BatchSpec): TrainSample[] {
  const out: TrainSample[] = [];
  for (const s of spec.samples) {
    const earlier = out.length > 0 ? out[s.pick % out.length]! : null;
    let head: number[];
    if (s.base === "prompt" || earlier === null) head = s.base === "fresh" ? [] : [...spec.prompt];
    else if (s.base === "duplicate") {
      out.push({ ...earlier, logprobs: earlier.logprobs.map((lp, t) => (earlier.lossMask[t] === 1 ? lp + s.drift[t]! : 0)) });
      continue;
    } else if (s.base === "truncated") head = [...spec.prompt.slice(0, 1 + (s.cut % spec.prompt.length))];
    else head = earlier.tokenIds.slice(0, 1 + (s.cut % earlier.tokenIds.length));
    const tokenIds = [...head, ...s.tail].slice(0, SHAPE.context);
    if (tokenIds.length === 0) tokenIds.push(s.tail[0] ?? 1);
    const lossMask = tokenIds.map((_, t) => (t > 0 && s.maskBits[t] ? 1 : 0));
    const logprobs = lossMask.map((m, t) => (m === 1 ? -1.5 + s.drift[t]! : 0));
    out.push({ tokenIds, lossMask, logprobs, advantage: s.advantage, weight: s.weight });
  }
  return out;
}

function float64Model(seed: number): { w: ModelWeights; ref: ModelWeights; size: number } {
  const layout = createLayout(SHAPE);
  const buf = new Float64Array(layout.size);
  initWeights(layout, buf, seed, 0.3);
  const refBuf = buf.slice();
  const rng = new Rng(seed + 1);
  for (let i = 0; i < refBuf.length; i++) refBuf[i] = refBuf[i]! + rng.gaussian() * 0.05;
  return { w: viewWeights(layout, buf), ref: viewWeights(layout, refBuf), size: layout.size };
}

function flatStep(w: ModelWeights, ref: ModelWeights | null, samples: TrainSample[], params: { clipEps: number; klCoef: number; supervised: boolean }) {
  const grads = viewWeights(createLayout(SHAPE), new Float64Array(w.buffer.length));
  const totals = createLossTotals();
  const tokens = samples.reduce((n, s) => n + countLossTokens(s), 0);
  const wT = transposeWeights(w, SHAPE);
  for (const s of samples) {
    accumulateSample(w, wT, grads, SHAPE, s, ref ? scoreReference(ref, SHAPE, s) : undefined, tokens, params, totals);
  }
  return { grads: grads.buffer, totals };
}

function treeStep(
  w: ModelWeights,
  ref: ModelWeights | null,
  samples: TrainSample[],
  budget: TrieBudget,
  params: { clipEps: number; klCoef: number; supervised: boolean },
) {
  const grads = viewWeights(createLayout(SHAPE), new Float64Array(w.buffer.length));
  const totals = createLossTotals();
  const tokens = samples.reduce((n, s) => n + countLossTokens(s), 0);
  const wT = transposeWeights(w, SHAPE);
  const packs = packTreeBatch(samples, budget);
  for (const p of packs) {
    // Each token's attention path is its trie path.
    p.paths.forEach((path) => path.forEach((node, t) => expect(readLayoutPath(p.layout, node)).toEqual(path.slice(0, t + 1))));
    accumulateTree(w, wT, grads, SHAPE, p, ref ? scoreReferenceTree(ref, SHAPE, p) : undefined, tokens, params, totals);
  }
  return { grads: grads.buffer, totals, treeTokens: packs.reduce((n, p) => n + p.layout.ids.length, 0) };
}

function expectTotalsClose(a: LossTotals, b: LossTotals): void {
  expect(b.tokens).toBe(a.tokens);
  expect(b.clipped).toBe(a.clipped);
  expect(Math.abs(b.loss - a.loss)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(a.loss)));
  expect(Math.abs(b.kl - a.kl)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(a.kl)));
}

describe("tree training (embedded)", () => {
  it("gives the flat batch's loss and gradients on random branching timelines (float64)", () => {
    fc.assert(
      fc.property(batchSpec, (spec) => {
        const samples = buildSamples(spec);
        const { w, ref } = float64Model(spec.seed);
        const params = { clipEps: 0.2, klCoef: spec.kl ? 0.3 : 0, supervised: spec.supervised };
        const flat = flatStep(w, spec.kl ? ref : null, samples, params);
        const tree = treeStep(w, spec.kl ? ref : null, samples, spec.budget, params);
        expectTotalsClose(flat.totals, tree.totals);
        let scale = 0;
        for (let i = 0; i < flat.grads.length; i++) scale = Math.max(scale, Math.abs(flat.grads[i]!));
        for (let i = 0; i < flat.grads.length; i++) {
          const err = Math.abs(tree.grads[i]! - flat.grads[i]!);
          if (err > 1e-12 * Math.max(1, scale)) expect.fail(`gradient ${i}: tree ${tree.grads[i]} flat ${flat.grads[i]}`);
        }
        expect(tree.treeTokens).toBeLessThanOrEqual(samples.reduce((n, s) => n + s.tokenIds.length, 0));
      }),
      { numRuns: 60, seed: 28 },
    );
  });

  it("computes a shared prefix once", () => {
    const prompt = [1, 2, 3, 4, 5];
    const samples: TrainSample[] = [6, 7, 8].map((a) => ({
      tokenIds: [...prompt, a, 9],
      lossMask: [0, 0, 0, 0, 0, 1, 1],
      logprobs: [0, 0, 0, 0, 0, -1, -1],
      advantage: 1,
      weight: 1,
    }));
    const packs = packTreeBatch(samples, treeBudget(SHAPE));
    expect(packs).toHaveLength(1);
    expect(packs[0]!.layout.ids).toHaveLength(5 + 3 * 2);
    // Each branch's tokens see the prompt and their own branch, never a sibling's.
    const p = packs[0]!;
    for (const path of p.paths) {
      const leaf = path[path.length - 1]!;
      expect(readLayoutPath(p.layout, leaf)).toEqual(path);
    }
  });
});

const KINDS: StepKind[] = ["retry", "retry", "truncate", "duplicate"];
const stepArb: fc.Arbitrary<ScriptStep> = fc.record({
  kind: fc.oneof({ arbitrary: fc.constant<StepKind>("append"), weight: 3 }, { arbitrary: fc.constantFrom(...KINDS), weight: 2 }),
  out: fc.array(fc.integer({ min: 40, max: 60 }), { minLength: 1, maxLength: 4 }),
  stop: fc.boolean(),
  logprobs: fc.array(fc.double({ min: -4, max: -0.1, noNaN: true }), { minLength: 1, maxLength: 5 }),
  reply: fc.constantFrom("ok", "no", ""),
  bumpVersion: fc.constant(false),
  pick: fc.nat(),
});

async function savedWeights(engine: { save(dir: string): Promise<void> }): Promise<Float32Array> {
  const dir = await mkdtemp(join(tmpdir(), "aj-tree-train-"));
  try {
    await engine.save(dir);
    const bytes = await readFile(join(dir, "weights.f32"));
    return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("tree training through the engine (float32)", () => {
  it("leaves the flat batch's weights after a step, on merged n > 1 episodes with retries and truncation", async () => {
    const vocabSize = createEmbeddedTokenizer().vocabSize;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(stepArb, { minLength: 1, maxLength: 4 }), { minLength: 2, maxLength: 3 }),
        fc.array(fc.double({ min: -1.5, max: 1.5, noNaN: true }), { minLength: 3, maxLength: 3 }),
        fc.integer({ min: 1, max: 8 }),
        fc.boolean(),
        async (episodes, advantages, microBatch, kl) => {
          // n > 1: every episode answers the same task, so their timelines branch from one prompt.
          const samples: TrainSample[] = episodes.flatMap((steps, e) =>
            mergeTimelines(recordEpisode(steps, { episodeId: `e${e}`, agentId: "a", task: "t" }), {
              match: "token",
              ignoreTools: true,
              overflow: "drop",
            }).timelines.map((t) => ({ ...t, advantage: advantages[e]!, weight: 1 })),
          );
          const context = Math.max(...samples.map((s) => s.tokenIds.length));
          const make = (micro: number) =>
            createEmbeddedEngine({
              vocabSize,
              model: EmbeddedModelSchema.parse({ layers: 1, dim: 8, heads: 2, context, seed: 7 }),
              optimizer: OptimizerSchema.parse({ lr: 1e-2, microBatch: micro, klCoef: kl ? 0.2 : 0, epochs: 2 }),
            });
          const flat = make(16);
          const tree = make(microBatch);
          const mf = await flat.train({ samples });
          const mt = await tree.train({ samples, prefixTree: true });
          expect(mt.tokens).toBe(mf.tokens);
          expect(Math.abs(mt.loss - mf.loss)).toBeLessThanOrEqual(1e-5 * Math.max(1, Math.abs(mf.loss)));
          expect(Math.abs(mt.gradNorm - mf.gradNorm)).toBeLessThanOrEqual(1e-4 * Math.max(1, mf.gradNorm));
          const wf = await savedWeights(flat);
          const wt = await savedWeights(tree);
          for (let i = 0; i < wf.length; i++) {
            if (Math.abs(wt[i]! - wf[i]!) > 1e-5) expect.fail(`weight ${i}: tree ${wt[i]} flat ${wf[i]}`);
          }
          await flat.close();
          await tree.close();
        },
      ),
      { numRuns: 12, seed: 28 },
    );
  });
});
