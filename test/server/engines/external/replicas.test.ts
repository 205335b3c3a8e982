import { describe, expect, it } from "vitest";
import type { SamplingParams } from "../../../../server/engines/engine.ts";
import { createOpenAITokensEngine } from "../../../../server/engines/openai-tokens/index.ts";
import { ReplicaPool } from "../../../../server/engines/openai-tokens/replica-pool.ts";
import { deadUrl, doublesPerTest } from "./doubles.ts";

const PARAMS: SamplingParams = { maxTokens: 3, temperature: 0, topP: 1, stopIds: [] };

describe("replicas behind one policy", () => {
  const doubles = doublesPerTest();

  it("balances by in-flight load", async () => {
    const rig = await doubles.start({ replicas: 2 });
    const engine = createOpenAITokensEngine(rig.config());
    const releases = rig.replicas.map((r) => r.hold());
    const calls = Array.from({ length: 6 }, (_, i) => engine.generate([i + 1, 2], PARAMS));
    while (rig.replicas.reduce((n, r) => n + r.requests.length, 0) < 6) await new Promise((r) => setTimeout(r, 5));
    expect(rig.replicas.map((r) => r.requests.length)).toEqual([3, 3]);
    for (const release of releases) release();
    await Promise.all(calls);
  });

  it("weights scale each replica's share", () => {
    const pool = new ReplicaPool(["http://127.0.0.1:1", "http://127.0.0.1:2"], [3, 1], 1000);
    const counts = [0, 0];
    for (let i = 0; i < 8; i++) {
      const r = pool.pick(0, new Set())!;
      r.inFlight++;
      counts[pool.replicas.indexOf(r)]!++;
    }
    expect(counts).toEqual([6, 2]);
  });

  it("replicaWeights must match baseUrls", async () => {
    const rig = await doubles.start({ replicas: 2 });
    expect(() => createOpenAITokensEngine(rig.config({ replicaWeights: [1] }))).toThrow(expect.objectContaining({ code: "AJ_ERR_ENGINE_CONFIG" }));
  });

  it("a refused connection is retried on another replica", async () => {
    const rig = await doubles.start({ replicas: 1 });
    const cfg = rig.config();
    const engine = createOpenAITokensEngine({ ...cfg, baseUrls: [await deadUrl(), ...cfg.baseUrls] });
    for (let i = 0; i < 3; i++) await expect(engine.generate([1, 2, 3], PARAMS)).resolves.toMatchObject({ version: 0 });
    expect(rig.replicas[0]!.served).toHaveLength(3);
  });

  it("a 500 is retried elsewhere; when every try fails the error is coded", async () => {
    const rig = await doubles.start({ replicas: 2 });
    const engine = createOpenAITokensEngine(rig.config());
    for (const r of rig.replicas) r.failNext(1, 500);
    await expect(engine.generate([1, 2], PARAMS)).rejects.toMatchObject({ code: "AJ_ERR_NO_REPLICA" });
    await expect(engine.generate([1, 2], PARAMS)).resolves.toMatchObject({ outputIds: expect.any(Array) });
    rig.replicas[0]!.failNext(1, 503);
    rig.replicas[1]!.failNext(0);
    await engine.generate([1, 2], PARAMS);
    await engine.generate([1, 2], PARAMS);
    expect(rig.replicas.reduce((n, r) => n + r.served.length, 0)).toBe(3);
  });

  it("when no replica is up, the error names the replica's URL and the network cause", async () => {
    const rig = await doubles.start({ replicas: 1 });
    const dead = await deadUrl();
    const engine = createOpenAITokensEngine({ ...rig.config(), baseUrls: [dead] });
    const err = await engine.generate([1, 2], PARAMS).then(() => null, (e: Error & { code?: string }) => e);
    expect(err?.code).toBe("AJ_ERR_NO_REPLICA");
    expect(err?.message).toContain(`last: ${dead}`);
    expect(err?.message).toContain("ECONNREFUSED");
  });

  it("a 400 is not retried", async () => {
    const rig = await doubles.start({ replicas: 2, vllm: { maxModelLen: 8 } });
    const engine = createOpenAITokensEngine(rig.config({ maxContext: 100 }));
    await expect(engine.generate([1, 2, 3, 4, 5, 6], PARAMS)).rejects.toMatchObject({ code: "AJ_ERR_REPLICA_REQUEST", status: 400 });
    expect(rig.replicas.reduce((n, r) => n + r.requests.length, 0)).toBe(1);
  });

  it("max_tokens is clipped to the context left, and a full context is a coded error", async () => {
    const rig = await doubles.start({ replicas: 1 });
    const engine = createOpenAITokensEngine(rig.config({ maxContext: 5 }));
    const g = await engine.generate([1, 2, 3], { ...PARAMS, maxTokens: 10 });
    expect(g.outputIds).toHaveLength(2);
    await expect(engine.generate([1, 2, 3, 4, 5], PARAMS)).rejects.toMatchObject({ code: "AJ_ERR_CONTEXT_OVERFLOW" });
  });

  it("stop ids end the output and are kept; top log-probs come back as ids", async () => {
    const rig = await doubles.start({ replicas: 1, vllm: { vocabSize: 4 } });
    const engine = createOpenAITokensEngine(rig.config());
    const g = await engine.generate([1, 2], { maxTokens: 50, temperature: 1, topP: 1, seed: 3, stopIds: [0, 1, 2, 3], topLogprobs: 2 });
    expect(g.finishReason).toBe("stop");
    expect(g.outputIds).toHaveLength(1);
    expect(g.topLogprobs?.[0]).toHaveLength(2);
    expect(g.topLogprobs?.[0]?.[0]?.logprob).toBeGreaterThanOrEqual(g.topLogprobs?.[0]?.[1]?.logprob ?? 0);
  });

  it("a replica that missed an adapter load is left out until it catches up", async () => {
    const rig = await doubles.start({ replicas: 2 });
    const engine = createOpenAITokensEngine(rig.config({ adapterPrefix: "pol" }));
    const g = await engine.generate([1, 2], PARAMS);
    // Replica 1 already holds the name: vLLM refuses a second load, the engine unloads and reloads it.
    await fetch(`${rig.replicas[1]!.url}/v1/load_lora_adapter`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ lora_name: "pol-v1", lora_path: "/stale" }),
    });
    await engine.train({ samples: [{ tokenIds: [1, 2, ...g.outputIds], lossMask: [0, 0, 1, 1, 1], logprobs: [0, 0, ...g.logprobs], advantage: 1, weight: 1 }] });
    expect(rig.replicas[1]!.adapters.get("pol-v1")).toBe("/nonexistent/trainer-double/pol-v1");
    expect(rig.replicas[0]!.adapters.has("pol-v1")).toBe(true);
  });
});
