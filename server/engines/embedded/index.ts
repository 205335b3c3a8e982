/** The embedded engine: a small decoder-only transformer that generates and trains in-process on CPU. */
export {
  createEmbeddedEngine,
  toModelShape,
  type EmbeddedEngine,
  type EmbeddedEngineOptions,
  type EmbeddedModelOptions,
  type OptimizerOptions,
} from "./embedded-engine.ts";
export {
  EmbeddedCheckpointInvalidError,
  EmbeddedCheckpointMismatchError,
  EmbeddedClosedError,
  EmbeddedConfigError,
  EmbeddedContextOverflowError,
  EmbeddedEngineError,
  EmbeddedInputError,
} from "./errors.ts";
export {
  createLayout,
  initWeights,
  viewWeights,
  type LayerWeights,
  type ModelShape,
  type ModelWeights,
  type ParamLayout,
  type TensorSpec,
} from "./layout.ts";
export { chainLayout, readLayoutPath, treeLayout, type AttentionLayout } from "./attention-layout.ts";
export {
  backwardSequence,
  forwardLayout,
  forwardSequence,
  scoreSequence,
  transposeWeights,
  type ForwardPass,
  type TransposedWeights,
} from "./model.ts";
export { DecodeScratch, KvCache, decodeTokens } from "./decode.ts";
export { TokenSampler, topLogprobs } from "./sampling.ts";
export { computeTokenLoss, type TokenLoss, type TokenLossParams } from "./ppo-loss.ts";
export {
  accumulateSample,
  accumulateTree,
  countLossTokens,
  createLossTotals,
  scoreReference,
  scoreReferenceTree,
  type LossTotals,
  type TreeTrainPack,
} from "./train-step.ts";
export { packTreeBatch, TREE_CONTEXTS_PER_PACK, treeBudget } from "./tree-batch.ts";
export { applyAdam, clipGradNorm, createAdamState, type AdamParams, type AdamState } from "./adam.ts";
export { CheckpointHeaderSchema, readCheckpoint, writeCheckpoint, type CheckpointData, type CheckpointHeader } from "./checkpoint.ts";
export { Rng } from "./rng.ts";
export type { FloatArray } from "./kernels.ts";
