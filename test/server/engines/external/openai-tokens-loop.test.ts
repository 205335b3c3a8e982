import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SamplingParams } from "../../../../server/engines/engine.ts";
import { createOpenAITokensEngine } from "../../../../server/engines/openai-tokens/index.ts";
import type { TrainSample } from "../../../../server/training/sample.ts";
import { doublesPerTest } from "./doubles.ts";

const PARAMS: SamplingParams = { maxTokens: 6, temperature: 1, topP: 1, seed: 7, stopIds: [] };

/** A merged two-call sample as the tracker builds it: prompt, output 1, tool tokens, output 2. */
function mergeTwoCalls(prompt: number[], out1: { outputIds: number[]; logprobs: number[] }, tool: number[], out2: { outputIds: number[]; logprobs: number[] }): TrainSample {
  const tokenIds = [...prompt, ...out1.outputIds, ...tool, ...out2.outputIds];
  const lossMask = [...prompt.map(() => 0), ...out1.outputIds.map(() => 1), ...tool.map(() => 0), ...out2.outputIds.map(() => 1)];
  const logprobs = [...prompt.map(() => 0), ...out1.logprobs, ...tool.map(() => 0), ...out2.logprobs];
  return { tokenIds, lossMask, logprobs, advantage: 0.5, weight: 1 };
}

describe("openai-tokens engine against the vLLM and trainer test doubles (loopback HTTP)", () => {
  const doubles = doublesPerTest("aj-ext-");

  it("generate -> train step -> publish -> the next call is served by the new adapter", async () => {
    const dir = await doubles.tempDir();
    const rig = await doubles.start({ trainer: { publishDir: dir }, vllm: { requireAdapterFiles: true } });
    const engine = createOpenAITokensEngine(rig.config());
    expect(engine.kind).toBe("openai-tokens");
    expect(engine.version()).toBe(0);

    const prompt = [1, 2, 3, 4];
    const first = await engine.generate(prompt, PARAMS);
    expect(first.version).toBe(0);
    expect(first.outputIds).toHaveLength(6);
    expect(first.finishReason).toBe("length");
    const tool = [9, 9, 9];
    const ctx2 = [...prompt, ...first.outputIds, ...tool];
    const second = await engine.generate(ctx2, PARAMS);

    const servedAll = rig.replicas.flatMap((r) => r.served);
    expect(servedAll.map((s) => s.model)).toEqual(["Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct"]);
    // What the engine returned is exactly what the replicas sampled, id for id and log-prob for log-prob.
    expect(new Set(servedAll.map((s) => JSON.stringify([s.outputIds, s.logprobs])))).toEqual(
      new Set([first, second].map((g) => JSON.stringify([g.outputIds, g.logprobs]))),
    );
    // The prompt reached vLLM as ids, with the token-in/token-out fields.
    const req = rig.replicas.flatMap((r) => r.requests)[0] as Record<string, unknown>;
    expect(req).toMatchObject({
      prompt,
      max_tokens: 6,
      temperature: 1,
      top_p: 1,
      seed: 7,
      logprobs: 0,
      return_tokens_as_token_ids: true,
      skip_special_tokens: false,
      stop_token_ids: [],
    });

    const sample = mergeTwoCalls(prompt, first, tool, second);
    const metrics = await engine.train({ samples: [sample] });
    expect(metrics.version).toBe(1);
    expect(metrics.tokens).toBe(12);
    expect(metrics.loss).toBeCloseTo(-0.5);
    expect(engine.version()).toBe(1);

    // The ids that reached the trainer are exactly the ids served.
    const got = rig.trainer.received.trainSteps[0]!.samples[0]!;
    expect(got.token_ids).toEqual(sample.tokenIds);
    const trained = got.token_ids.filter((_, i) => got.loss_mask[i] === 1);
    expect(trained).toEqual([...first.outputIds, ...second.outputIds]);
    expect(got.logprobs.filter((_, i) => got.loss_mask[i] === 1)).toEqual([...first.logprobs, ...second.logprobs]);

    // Publish loaded the adapter into every replica, from the folder the trainer wrote.
    const adapterName = "Qwen-Qwen2.5-7B-Instruct-v1";
    for (const r of rig.replicas) expect(r.adapters.get(adapterName)).toBe(join(dir, adapterName));

    const third = await engine.generate(prompt, PARAMS);
    expect(third.version).toBe(1);
    expect(rig.replicas.flatMap((r) => r.served).filter((s) => s.model === adapterName)).toHaveLength(1);
    // Same prompt and seed, another version: the double's new weights sample differently.
    expect(third.outputIds).not.toEqual(first.outputIds);
    await engine.close();
  });

  it("refuses to train a span it never served, and nothing reaches the trainer", async () => {
    const rig = await doubles.start({ replicas: 1 });
    const engine = createOpenAITokensEngine(rig.config());
    const g = await engine.generate([5, 6, 7], PARAMS);
    const tampered = [...g.outputIds];
    tampered[2] = (tampered[2]! + 1) % 256;
    const sample: TrainSample = {
      tokenIds: [5, 6, 7, ...tampered],
      lossMask: [0, 0, 0, ...tampered.map(() => 1)],
      logprobs: [0, 0, 0, ...g.logprobs],
      advantage: 1,
      weight: 1,
    };
    await expect(engine.train({ samples: [sample] })).rejects.toMatchObject({ code: "AJ_ERR_UNSERVED_TOKENS", sampleIndex: 0, position: 3 });
    expect(rig.trainer.received.trainSteps).toHaveLength(0);
    expect(engine.version()).toBe(0);

    // A cut prefix of the served output (a stop string), then the end-of-turn stop id, is accepted.
    const eot = 255;
    const h = await engine.generate([5, 6, 7], { ...PARAMS, stopIds: [eot] });
    const kept = h.outputIds.slice(0, 2);
    const ok: TrainSample = {
      tokenIds: [5, 6, 7, ...kept, eot],
      lossMask: [0, 0, 0, ...kept.map(() => 1), 1],
      logprobs: [0, 0, 0, ...h.logprobs.slice(0, kept.length), 0],
      advantage: 1,
      weight: 1,
    };
    await expect(engine.train({ samples: [ok] })).resolves.toMatchObject({ version: 1 });
  });

  it("scoreTokens reproduces the served behaviour log-probs from vLLM's prompt_logprobs", async () => {
    const rig = await doubles.start({ replicas: 1 });
    const engine = createOpenAITokensEngine(rig.config());
    const prompt = [7, 8, 9];
    const g = await engine.generate(prompt, { ...PARAMS, temperature: 0.8 });
    const scored = await engine.scoreTokens!([...prompt, ...g.outputIds]);
    expect(scored[0]).toBe(0);
    expect(scored.slice(prompt.length)).toEqual(g.logprobs);
    expect((rig.replicas[0]!.requests.at(-1) as Record<string, unknown>).prompt_logprobs).toBe(0);
  });

  it("full-weights mode: the trainer reports the version, calls keep the base model name", async () => {
    const rig = await doubles.start({ replicas: 1, trainer: { mode: "full" } });
    const engine = createOpenAITokensEngine(rig.config({ weights: "full" }));
    const g = await engine.generate([1, 2], PARAMS);
    await engine.train({
      samples: [{ tokenIds: [1, 2, ...g.outputIds], lossMask: [0, 0, ...g.outputIds.map(() => 1)], logprobs: [0, 0, ...g.logprobs], advantage: 1, weight: 1 }],
    });
    const next = await engine.generate([1, 2], PARAMS);
    expect(next.version).toBe(1);
    expect(rig.replicas[0]!.served.at(-1)?.model).toBe("Qwen/Qwen2.5-7B-Instruct");
    expect(rig.replicas[0]!.adapters.size).toBe(0);
  });

  it("save and load go through the trainer and reload the checkpoint's adapter", async () => {
    const dir = await doubles.tempDir();
    const rig = await doubles.start({ replicas: 1 });
    const engine = createOpenAITokensEngine(rig.config({ adapterPrefix: "pol" }));
    const g = await engine.generate([3, 4], PARAMS);
    const sample: TrainSample = { tokenIds: [3, 4, ...g.outputIds], lossMask: [0, 0, ...g.outputIds.map(() => 1)], logprobs: [0, 0, ...g.logprobs], advantage: 1, weight: 1 };
    await engine.train({ samples: [sample] });
    await engine.save(join(dir, "ckpt"));
    await engine.train({ samples: [sample] });
    expect(engine.version()).toBe(2);
    await engine.load(join(dir, "ckpt"));
    expect(engine.version()).toBe(1);
    expect(rig.trainer.received.loads).toEqual([join(dir, "ckpt")]);
    expect(rig.replicas[0]!.adapters.has("pol-v1")).toBe(true);
    const next = await engine.generate([3, 4], PARAMS);
    expect(next.version).toBe(1);
    expect(rig.replicas[0]!.served.at(-1)?.model).toBe("pol-v1");
  });

  it("old adapters are unloaded once newer versions serve", async () => {
    const rig = await doubles.start({ replicas: 1 });
    const engine = createOpenAITokensEngine(rig.config({ adapterPrefix: "pol" }));
    for (let step = 0; step < 4; step++) {
      const g = await engine.generate([3, 4], PARAMS);
      await engine.train({
        samples: [{ tokenIds: [3, 4, ...g.outputIds], lossMask: [0, 0, ...g.outputIds.map(() => 1)], logprobs: [0, 0, ...g.logprobs], advantage: 1, weight: 1 }],
      });
    }
    expect([...rig.replicas[0]!.adapters.keys()].sort()).toEqual(["pol-v3", "pol-v4"]);
  });
});
