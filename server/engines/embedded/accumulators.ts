import type { TrainBatch } from "../../training/sample.ts";
import type { ModelShape, ModelWeights } from "./layout.ts";
import type { TransposedWeights } from "./model.ts";
import { accumulateSample, accumulateTree, scoreReference, scoreReferenceTree, type LossTotals, type StepLossParams } from "./train-step.ts";
import { packTreeBatch, treeBudget } from "./tree-batch.ts";

/** A step's gradient work in units that the event loop runs between. */
export interface Accumulator {
  units: number;
  /** Tokens the units compute as prefix tries; absent for flat samples. */
  treeTokens?: number;
  run(unit: number, wT: TransposedWeights, totals: LossTotals): void;
}

/** The model a step trains: its weights, the buffer its gradients add up in, and its shape. */
export interface StepModel {
  weights: ModelWeights;
  grads: ModelWeights;
  shape: ModelShape;
}

/** One step's loss: the batch, the KL reference (or null), the batch's masked-token count and the loss parameters. */
export interface StepInput {
  batch: TrainBatch;
  ref: ModelWeights | null;
  batchTokens: number;
  params: StepLossParams;
}

/** One unit per micro-batch of `microBatch` samples, each sample its own forward and backward pass. */
export function flatAccumulator(model: StepModel, step: StepInput, microBatch: number): Accumulator {
  const { weights, grads, shape } = model;
  const { batch, ref, batchTokens, params } = step;
  const refLogps = ref ? batch.samples.map((s) => scoreReference(ref, shape, s)) : undefined;
  return {
    units: Math.ceil(batch.samples.length / microBatch),
    run: (unit, wT, totals) => {
      const end = Math.min((unit + 1) * microBatch, batch.samples.length);
      for (let i = unit * microBatch; i < end; i++) {
        accumulateSample(weights, wT, grads, shape, batch.samples[i]!, refLogps?.[i], batchTokens, params, totals);
      }
    },
  };
}

/**
 * One unit per prefix trie, each within the cost of two full-context samples (`treeBudget`, so a
 * unit's work and activations stay within twice the longest flat sample's): one forward and backward
 * pass each.
 */
export function treeAccumulator(model: StepModel, step: StepInput): Accumulator {
  const { weights, grads, shape } = model;
  const { batch, ref, batchTokens, params } = step;
  const packs = packTreeBatch(batch.samples, treeBudget(shape));
  const refLogps = ref ? packs.map((p) => scoreReferenceTree(ref, shape, p)) : undefined;
  return {
    units: packs.length,
    treeTokens: packs.reduce((n, p) => n + p.layout.ids.length, 0),
    run: (unit, wT, totals) => {
      accumulateTree(weights, wT, grads, shape, packs[unit]!, refLogps?.[unit], batchTokens, params, totals);
    },
  };
}
