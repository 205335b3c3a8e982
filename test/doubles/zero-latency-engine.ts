import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { TrainBatch, TrainMetrics } from "../../server/training/sample.ts";
import type { Engine, GenerateResult, SamplingParams } from "../../server/engines/engine.ts";

export interface ZeroLatencyEngineOptions {
  /**
   * The ids to "generate" for a prompt (a script). The engine cuts them at the first stop id or at
   * maxTokens, like a real engine would. Default: always `defaultIds`.
   */
  respond?: (promptIds: readonly number[], params: SamplingParams) => readonly number[];
  /** Used when `respond` is absent. */
  defaultIds?: readonly number[];
  maxContext?: number;
}

/** A deterministic stand-in log-prob in (-1, 0): the double has no model, but callers must see real-looking values. */
function fakeLogprob(id: number): number {
  return -(((id * 31) % 97) + 1) / 100;
}

/**
 * TEST DOUBLE of an engine (the `Engine` contract, server/engines/engine.ts) with no model and no
 * latency. It returns scripted token ids with deterministic log-probs, honours maxTokens and stop ids,
 * and counts versions on `train`. For tests and the proxy bench.
 */
export function createZeroLatencyEngine(opts: ZeroLatencyEngineOptions = {}): Engine {
  let version = 0;
  const maxContext = opts.maxContext ?? 32_768;
  return {
    kind: "zero-latency",
    maxContext,
    version: () => version,
    async generate(promptIds, params): Promise<GenerateResult> {
      const script = opts.respond ? opts.respond(promptIds, params) : (opts.defaultIds ?? []);
      const outputIds: number[] = [];
      let finishReason: GenerateResult["finishReason"] = "stop";
      for (const id of script) {
        if (outputIds.length >= params.maxTokens) {
          finishReason = "length";
          break;
        }
        outputIds.push(id);
        if (params.stopIds.includes(id) || params.onToken?.(id, fakeLogprob(id)) === true) break;
      }
      const logprobs = outputIds.map((id) => fakeLogprob(id));
      const result: GenerateResult = { outputIds, logprobs, finishReason, version };
      if (params.topLogprobs && params.topLogprobs > 0) {
        const k = params.topLogprobs;
        result.topLogprobs = outputIds.map((id, i) =>
          Array.from({ length: k }, (_, j) => (j === 0 ? { id, logprob: logprobs[i]! } : { id: id + j, logprob: logprobs[i]! - j })),
        );
      }
      return result;
    },
    async train(batch: TrainBatch): Promise<TrainMetrics> {
      const tokens = batch.samples.reduce((n, s) => n + s.lossMask.reduce((a, b) => a + b, 0), 0);
      version += 1;
      return { loss: 0, tokens, gradNorm: 0, clipFraction: 0, version, durationMs: 0 };
    },
    async scoreTokens(ids) {
      return ids.map((id, i) => (i === 0 ? 0 : fakeLogprob(id)));
    },
    async save(dir) {
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, "zero-latency.json"), JSON.stringify({ version }));
    },
    async load(dir) {
      version = (JSON.parse(await readFile(join(dir, "zero-latency.json"), "utf8")) as { version: number }).version;
    },
    async close() {},
  };
}
