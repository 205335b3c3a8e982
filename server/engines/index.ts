/** The engine contract, `createEngine` (loads the engine a policy names on first use) and the frozen-model type. */
export { createEngine } from "./create-engine.ts";
export type { Engine } from "./engine.ts";
export { type FrozenModel, FrozenUpstreamError } from "./frozen.ts";
