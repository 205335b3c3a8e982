/** The engine contract, `createEngine` (loads the engine a policy names on first use) and frozen models. */
export { createEngine, type CreateEngineDeps } from "./create-engine.ts";
export type { Engine, GenerateResult, GuidedDecoding, SamplingParams, TokenMask } from "./engine.ts";
export { createFrozenModel, FrozenUpstreamError, type FrozenModel, type FrozenModelDeps, type UpstreamCompletion } from "./frozen.ts";
