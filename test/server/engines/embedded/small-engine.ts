import { EmbeddedModelSchema, OptimizerSchema } from "../../../../server/config/run-config.ts";
import { createEmbeddedEngine, type EmbeddedEngine } from "../../../../server/engines/embedded/index.ts";
import type { TrainSample } from "../../../../server/training/sample.ts";

/** A small engine for unit tests: real code, shrunk so that a test runs in milliseconds. */
export function createSmallEngine(
  overrides: { model?: Record<string, unknown>; optimizer?: Record<string, unknown>; vocabSize?: number } = {},
): EmbeddedEngine {
  return createEmbeddedEngine({
    vocabSize: overrides.vocabSize ?? 24,
    model: EmbeddedModelSchema.parse({ layers: 2, dim: 16, heads: 2, context: 32, seed: 1, ...overrides.model }),
    optimizer: OptimizerSchema.parse({ lr: 1e-2, ...overrides.optimizer }),
  });
}

/** A batch of random sequences whose second half is under the loss, with alternating advantages. */
export async function makeBatch(
  engine: EmbeddedEngine,
  opts: { samples: number; length: number; seed: number },
): Promise<TrainSample[]> {
  const out: TrainSample[] = [];
  let state = opts.seed;
  const next = (): number => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  for (let k = 0; k < opts.samples; k++) {
    const tokenIds = Array.from({ length: opts.length }, () => Math.floor(next() * (engine.shape.vocabSize - 1)) + 1);
    const lossMask = tokenIds.map((_, t) => (t >= opts.length / 2 ? 1 : 0));
    const scored = await engine.scoreTokens(tokenIds);
    const logprobs = scored.map((lp, t) => (lossMask[t] === 1 ? lp : 0));
    out.push({ tokenIds, lossMask, logprobs, advantage: k % 2 === 0 ? 1 : -1, weight: 1 });
  }
  return out;
}
