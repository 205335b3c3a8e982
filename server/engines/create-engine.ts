import type { PolicyConfig } from "../config/run-config.ts";
import type { Tokenizer } from "../tokenizers/tokenizer.ts";
import type { Engine } from "./engine.ts";

export interface CreateEngineDeps {
  /** For `openai-tokens` replicas and trainers. Default: global fetch. */
  fetch?: typeof fetch;
}

/**
 * Builds a policy's engine from its run config; the tokenizer fixes the embedded model's vocabulary.
 * Engine modules load on demand, so a server with only external engines never loads the embedded model.
 */
export async function createEngine(policy: PolicyConfig, tokenizer: Tokenizer, deps: CreateEngineDeps = {}): Promise<Engine> {
  const engine = policy.engine;
  if (engine.kind === "embedded") {
    const { createEmbeddedEngine } = await import("./embedded/index.ts");
    return createEmbeddedEngine({ vocabSize: tokenizer.vocabSize, model: engine.model, optimizer: policy.optimizer });
  }
  const { createOpenAITokensEngine } = await import("./openai-tokens/index.ts");
  return createOpenAITokensEngine(engine, deps.fetch === undefined ? {} : { fetch: deps.fetch });
}
