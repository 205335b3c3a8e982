import { realpath } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SamplingParams } from "../../../../server/engines/engine.ts";
import { createOpenAITokensEngine } from "../../../../server/engines/openai-tokens/index.ts";
import type { TrainBatch } from "../../../../server/training/sample.ts";
import { doublesPerTest } from "./doubles.ts";

const PARAMS: SamplingParams = { maxTokens: 4, temperature: 1, topP: 1, stopIds: [], seed: 1 };

const batchOf = (g: { outputIds: number[]; logprobs: number[] }): TrainBatch => ({
  samples: [{ tokenIds: [1, 2, ...g.outputIds], lossMask: [0, 0, ...g.outputIds.map(() => 1)], logprobs: [0, 0, ...g.logprobs], advantage: 1, weight: 1 }],
});

/** fetch that loses the answer of the first request to `path` (the request is served; the connection drops before the answer). */
function losingFirstAnswer(path: string): typeof fetch {
  let lost = false;
  return async (input, init) => {
    const res = await fetch(input, init);
    if (!lost && String(input).endsWith(path)) {
      lost = true;
      await res.text();
      throw new TypeError("fetch failed", { cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) });
    }
    return res;
  };
}

/**
 * The coordinator retries a failed step with the same batch. A step the trainer applied but whose answer
 * was lost (a timeout, a dropped connection) was refused 409 on every retry, and a step whose publish
 * failed was trained a second time on the retry; sent again with its `step_id`, the trainer answers it.
 */
describe("openai-tokens: a failed step retried with its batch (trainer and vLLM doubles)", () => {
  const doubles = doublesPerTest("aj-step-retry-");

  it("the answer was lost after the trainer applied the step: the retry gets that step, applied once", async () => {
    const rig = await doubles.start({ replicas: 1 });
    const engine = createOpenAITokensEngine(rig.config(), { fetch: losingFirstAnswer("/v1/train_step") });
    const batch = batchOf(await engine.generate([1, 2], PARAMS));
    await expect(engine.train(batch)).rejects.toMatchObject({ code: "AJ_ERR_TRAINER_UNAVAILABLE", message: expect.stringMatching(/ECONNRESET/) });
    expect([rig.trainer.version(), engine.version()]).toEqual([1, 0]);

    const metrics = await engine.train(batch);
    expect(metrics.version).toBe(1);
    expect(engine.version()).toBe(1);
    expect(rig.trainer.received.trainSteps).toHaveLength(1);
    expect(rig.trainer.received.replays).toBe(1);
    expect(rig.trainer.received.publishes.map((p) => p.version)).toEqual([1]);
    // The next batch is a step of its own.
    expect((await engine.train(batchOf(await engine.generate([3, 4], PARAMS)))).version).toBe(2);
  });

  it("the publish failed after the step: the retry publishes it and does not train the batch twice", async () => {
    const dir = await doubles.tempDir();
    const rig = await doubles.start({ replicas: 1, trainer: { mode: "full", publishDir: dir }, vllm: { devMode: true, weightsDir: join(dir, "current") } });
    await rig.trainer.app.inject({ method: "POST", url: "/v1/publish", payload: { version: 0 }, headers: { "x-agentjet-trainer-protocol": "1" } });
    const engine = createOpenAITokensEngine(rig.config({ weights: "full" }), { fetch: losingFirstAnswer("/collective_rpc") });
    const batch = batchOf(await engine.generate([1, 2], PARAMS));
    await expect(engine.train(batch)).rejects.toMatchObject({ code: "AJ_ERR_PUBLISH_FAILED", message: expect.stringMatching(/^no replica loaded version 1; version 0 keeps serving: .*ECONNRESET/) });
    expect([rig.trainer.version(), engine.version()]).toEqual([1, 0]);

    expect((await engine.train(batch)).version).toBe(1);
    expect(rig.trainer.received.trainSteps).toHaveLength(1);
    expect(rig.trainer.version()).toBe(1);
    expect(rig.replicas[0]!.reloads.at(-1)).toBe(await realpath(join(dir, "v1")));
    expect((await engine.generate([5, 6], PARAMS)).version).toBe(1);
  });

  it("a trainer at another version than the run's: the refusal says to --resume", async () => {
    const rig = await doubles.start({ replicas: 1, trainer: { version: 3 } });
    const engine = createOpenAITokensEngine(rig.config());
    await expect(engine.train(batchOf(await engine.generate([1, 2], PARAMS)))).rejects.toMatchObject({
      code: "AJ_ERR_TRAINER_REQUEST",
      trainerCode: "version_conflict",
      message: expect.stringMatching(/^trainer 409 version_conflict: trainer is at 3, step expects 0; the trainer restarted .* --resume it/),
    });
  });
});
