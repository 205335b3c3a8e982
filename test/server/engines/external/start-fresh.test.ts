import { mkdir, realpath, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SamplingParams } from "../../../../server/engines/engine.ts";
import { createOpenAITokensEngine } from "../../../../server/engines/openai-tokens/index.ts";
import { buildVllmDouble } from "../../../doubles/vllm-double.ts";
import { deadUrl, doublesPerTest } from "./doubles.ts";

const PARAMS: SamplingParams = { maxTokens: 4, temperature: 1, topP: 1, stopIds: [], seed: 1 };

/**
 * `startFresh`: what a run starting from step 0 checks of the trainer and the replicas before its first
 * episode (a trainer down, holding a key, left at version N by an earlier run, or training the other kind
 * of weights failed only after a batch of episodes had run, or never).
 */
describe("openai-tokens startFresh (trainer and vLLM doubles)", () => {
  const doubles = doublesPerTest("aj-start-fresh-");

  it("a trainer that does not answer: the URL, the network error and what to start", async () => {
    const rig = await doubles.start({ replicas: 1 });
    const engine = createOpenAITokensEngine(rig.config({ trainer: { url: await deadUrl(), timeoutMs: 10_000 } }));
    const err = (await engine.startFresh().catch((e: unknown) => e)) as Error & { code?: string };
    expect(err.code).toBe("AJ_ERR_TRAINER_UNAVAILABLE");
    expect(err.message).toMatch(/the trainer does not answer \(GET http:\/\/127\.0\.0\.1:\d+\/v1\/status: fetch failed \(ECONNREFUSED\)\): start it/);
  });

  it("a wrong key is named as the trainer's --api-key", async () => {
    const rig = await doubles.start({ replicas: 1, trainer: { apiKey: "the-trainer-key" } });
    const engine = createOpenAITokensEngine(rig.config({ trainer: { url: rig.trainer.url, apiKey: "another-key", timeoutMs: 10_000 } }));
    await expect(engine.startFresh()).rejects.toMatchObject({ code: "AJ_ERR_TRAINER_REQUEST", status: 401, message: expect.stringMatching(/engine\.trainer\.apiKey must be the trainer's --api-key/) });
  });

  it("a trainer past version 0 (an earlier run's) is refused before anything runs on its weights", async () => {
    const rig = await doubles.start({ replicas: 1, trainer: { version: 5 } });
    const engine = createOpenAITokensEngine(rig.config());
    await expect(engine.startFresh()).rejects.toMatchObject({ code: "AJ_ERR_TRAINER_STATE", message: expect.stringMatching(/is at version 5 .*restart the trainer, or --resume the run it trained/) });
    expect(rig.trainer.received.publishes).toEqual([]);
  });

  it("the trainer's mode must be the config's weights (lora when not set)", async () => {
    const rig = await doubles.start({ replicas: 1, trainer: { mode: "full" } });
    await expect(createOpenAITokensEngine(rig.config()).startFresh()).rejects.toMatchObject({
      code: "AJ_ERR_ENGINE_CONFIG",
      message: expect.stringMatching(/trains full weights \(--mode full\) but the engine config says weights: lora/),
    });
  });

  it("LoRA: version 0 is the base model, nothing is published", async () => {
    const rig = await doubles.start({ replicas: 1 });
    const engine = createOpenAITokensEngine(rig.config());
    await engine.startFresh();
    expect(rig.trainer.received.publishes).toEqual([]);
    expect((await engine.generate([1, 2], PARAMS)).version).toBe(0);
  });

  // The publish folder (and a running replica) held an earlier run's last weights: the new run's first
  // episodes ran on them, recorded as version 0, and trained against the trainer's initial weights.
  it("full weights: version 0 is published again and every replica reloads it; one that cannot is reloaded before it serves", async () => {
    const dir = await doubles.tempDir();
    await mkdir(join(dir, "v7"));
    await writeFile(join(dir, "v7", "config.json"), "{}");
    await symlink("v7", join(dir, "current"));
    const rig = await doubles.start({ replicas: 1, trainer: { mode: "full", publishDir: dir }, vllm: { devMode: true, weightsDir: join(dir, "current") } });
    // A second replica whose reload fails at first (its folder is not there yet).
    const late = buildVllmDouble({ model: "Qwen/Qwen2.5-7B-Instruct", devMode: true, weightsDir: join(dir, "late") });
    const lateUrl = await late.app.listen({ host: "127.0.0.1", port: 0 });
    try {
      const engine = createOpenAITokensEngine(rig.config({ weights: "full", baseUrls: [rig.replicas[0]!.url, lateUrl] }));
      await engine.startFresh();
      const v0 = await realpath(join(dir, "v0"));
      expect(rig.replicas[0]!.reloads).toEqual([v0]);
      expect(late.reloads).toEqual([]);
      expect(engine.replicaStatus().map((r) => r.version)).toEqual([0, -1]);

      await symlink("v0", join(dir, "late"));
      await rig.replicas[0]!.app.close();
      const g = await engine.generate([1, 2], PARAMS);
      expect(late.reloads).toEqual([v0]);
      expect(late.served).toHaveLength(1);
      expect(g.version).toBe(0);
    } finally {
      await late.app.close();
    }
  });

  it("full weights: a replica without the dev-mode routes fails the start with the replica's words", async () => {
    const dir = await doubles.tempDir();
    const rig = await doubles.start({ replicas: 1, trainer: { mode: "full", publishDir: dir } });
    const err = (await createOpenAITokensEngine(rig.config({ weights: "full" })).startFresh().catch((e: unknown) => e)) as Error & { code?: string };
    expect(err.code).toBe("AJ_ERR_PUBLISH_FAILED");
    expect(err.message).toMatch(/^no replica loaded version 0: .*VLLM_SERVER_DEV_MODE=1/);
  });
});
