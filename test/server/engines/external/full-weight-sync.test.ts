import { realpath } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SamplingParams } from "../../../../server/engines/engine.ts";
import { createOpenAITokensEngine } from "../../../../server/engines/openai-tokens/index.ts";
import { doublesPerTest } from "./doubles.ts";

const PARAMS: SamplingParams = { maxTokens: 4, temperature: 1, topP: 1, stopIds: [], seed: 1 };

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/**
 * Full-weight sync against the vLLM double's dev-mode reload routes: the trainer (double) writes
 * `v<N>/` and repoints `current`; each replica is drained of its running calls, reloaded, and only then
 * serves again, one replica at a time; every call reports the version whose weights served it.
 */
describe("full-weight sync (vLLM double reload routes, trainer double)", () => {
  const doubles = doublesPerTest("aj-full-sync-");

  async function setUp(replicas: number) {
    const dir = await doubles.tempDir();
    const rig = await doubles.start({ replicas, trainer: { mode: "full", publishDir: dir }, vllm: { devMode: true, weightsDir: join(dir, "current") } });
    // Version 0 on disk, as the reference service writes it at start-up.
    await rig.trainer.app.inject({ method: "POST", url: "/v1/publish", payload: { version: 0 }, headers: { "x-agentjet-trainer-protocol": "1" } });
    return { engine: createOpenAITokensEngine(rig.config({ weights: "full" })), rig, dir };
  }

  const sample = (ids: number[], lps: number[]) => ({
    samples: [{ tokenIds: [1, 2, ...ids], lossMask: [0, 0, ...ids.map(() => 1)], logprobs: [0, 0, ...lps], advantage: 1, weight: 1 }],
  });

  it("one replica: the reload waits for the running call; a call arriving meanwhile waits and gets the new weights", async () => {
    const { engine, rig, dir } = await setUp(1);
    const replica = rig.replicas[0]!;
    const g = await engine.generate([1, 2], PARAMS);
    const release = replica.hold();
    const running = engine.generate([5, 6], PARAMS);
    await until(() => replica.requests.length === 2);
    const training = engine.train(sample(g.outputIds, g.logprobs));
    await until(() => engine.replicaStatus()[0]!.draining);
    const arriving = engine.generate([7, 8], PARAMS);
    // Publish answered, the replica is draining: no reload under the running call.
    expect(replica.reloads).toEqual([]);
    release();
    const [old, fresh] = await Promise.all([running, arriving, training]);
    expect(old.version).toBe(0);
    expect(fresh.version).toBe(1);
    expect(replica.reloads).toEqual([await realpath(join(dir, "v1"))]);
    expect(replica.served.map((s) => [s.weights, s.mixedWeights])).toEqual([[0, false], [0, false], [1, false]]);
    expect(replica.served.at(-1)?.model).toBe("Qwen/Qwen2.5-7B-Instruct");
  });

  it("two replicas roll one at a time: while one drains, calls go to the other, reported at the version it serves", async () => {
    const { engine, rig, dir } = await setUp(2);
    const g = await engine.generate([1, 2], PARAMS);
    const releases = rig.replicas.map((r) => r.hold());
    const running = engine.generate([5, 6], PARAMS);
    await until(() => rig.replicas.reduce((n, r) => n + r.requests.length, 0) === 2);
    const heldIndex = rig.replicas.findIndex((r) => r.requests.length > r.served.length);
    const held = rig.replicas[heldIndex]!;
    const other = rig.replicas[1 - heldIndex]!;
    releases[1 - heldIndex]!();
    const training = engine.train(sample(g.outputIds, g.logprobs));
    await until(() => engine.replicaStatus()[heldIndex]!.draining);
    const during = await engine.generate([7, 8], PARAMS);
    expect(held.reloads).toEqual([]);
    // Served by the other replica, at the version of the weights it holds (its reload may come first).
    expect(during.version).toBe(other.served.at(-1)!.weights);
    releases[heldIndex]!();
    expect((await running).version).toBe(0);
    await training;
    const v1 = await realpath(join(dir, "v1"));
    expect([held.reloads, other.reloads]).toEqual([[v1], [v1]]);
    const after = await Promise.all([engine.generate([9, 9], PARAMS), engine.generate([9, 8], PARAMS)]);
    expect(after.map((x) => x.version)).toEqual([1, 1]);
    expect([...held.served, ...other.served].some((s) => s.mixedWeights)).toBe(false);
  });

  it("a replica without the dev-mode routes fails the publish with a hint, and the old version keeps serving", async () => {
    const dir = await doubles.tempDir();
    const rig = await doubles.start({ replicas: 1, trainer: { mode: "full", publishDir: dir } });
    const engine = createOpenAITokensEngine(rig.config({ weights: "full" }));
    const g = await engine.generate([1, 2], PARAMS);
    const err = await engine.train(sample(g.outputIds, g.logprobs)).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe("AJ_ERR_PUBLISH_FAILED");
    expect(String((err as Error).cause)).toMatch(/VLLM_SERVER_DEV_MODE=1/);
    expect((await engine.generate([1, 2], PARAMS)).version).toBe(0);
  });
});
