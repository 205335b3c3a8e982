import { describe, expect, it } from "vitest";
import { EmbeddedModelSchema, OptimizerSchema } from "../../../../server/config/run-config.ts";
import { createEmbeddedEngine } from "../../../../server/engines/embedded/index.ts";
import { countTurns } from "../../../helpers/event-loop-turns.ts";
import { createSmallEngine, makeBatch } from "./small-engine.ts";

const PROMPT = [1, 5, 7, 3, 9, 2];
const SAMPLE = { maxTokens: 12, temperature: 1, topP: 1, stopIds: [] as number[] };

describe("embedded generate", () => {
  it("returns temperature-1 log-probs equal to a full recomputation", async () => {
    // Trained a little first, so that the distributions are far from uniform.
    const engine = createSmallEngine({ optimizer: { lr: 5e-2 } });
    for (let seed = 1; seed <= 3; seed++) await engine.train({ samples: await makeBatch(engine, { samples: 8, length: 16, seed }) });
    const spread = await engine.scoreTokens([...PROMPT, ...PROMPT]);
    expect(Math.max(...spread.slice(1)) - Math.min(...spread.slice(1))).toBeGreaterThan(1);
    for (const params of [
      { ...SAMPLE, seed: 1 },
      { ...SAMPLE, temperature: 0.7, topP: 0.9, seed: 2 },
      { ...SAMPLE, temperature: 1.5, seed: 3 },
      { ...SAMPLE, temperature: 0 },
    ]) {
      const out = await engine.generate(PROMPT, params);
      expect(out.outputIds).toHaveLength(12);
      const scored = await engine.scoreTokens([...PROMPT, ...out.outputIds]);
      out.logprobs.forEach((lp, i) => expect(lp).toBeCloseTo(scored[PROMPT.length + i]!, 5));
    }
  });

  // A whole non-streamed reply ran in one go: 300-900 ms of the event loop for a 20-token JSON answer on
  // Qwen3's vocabulary. Now it lets the loop in once it has held it 2 ms.
  it("lets the event loop run during a long generation that is not streamed, with the same result", async () => {
    const big = () => createSmallEngine({ vocabSize: 40_000, model: { dim: 64, context: 512 } });
    const params = { maxTokens: 300, temperature: 1, topP: 1, stopIds: [] as number[], seed: 3 };
    const { value: out, turns } = await countTurns(() => big().generate(PROMPT, params));
    expect(out.outputIds).toHaveLength(300);
    expect(turns).toBeGreaterThan(1);
    // the same tokens as a streamed generation of the same seed (which yields after every token)
    const streamed = await big().generate(PROMPT, { ...params, onToken: () => false });
    expect(streamed.outputIds).toEqual(out.outputIds);
  });

  it("agrees with the recomputation for an untied output and a deeper MLP", async () => {
    const engine = createSmallEngine({ model: { tiedOutput: false, mlpRatio: 2, layers: 3 } });
    const out = await engine.generate(PROMPT, { ...SAMPLE, seed: 8 });
    const scored = await engine.scoreTokens([...PROMPT, ...out.outputIds]);
    out.logprobs.forEach((lp, i) => expect(lp).toBeCloseTo(scored[PROMPT.length + i]!, 5));
  });

  it("reuses a cached prompt prefix without changing results", async () => {
    const engine = createSmallEngine();
    const first = await engine.generate(PROMPT, { ...SAMPLE, seed: 4 });
    const next = [...PROMPT, ...first.outputIds, 4, 4];
    const cached = await engine.generate(next, { ...SAMPLE, seed: 5 });
    const fresh = await createSmallEngine().generate(next, { ...SAMPLE, seed: 5 });
    expect(cached).toEqual(fresh);
  });

  it("is deterministic given a seed and greedy at temperature 0", async () => {
    const a = await createSmallEngine().generate(PROMPT, { ...SAMPLE, seed: 9 });
    const b = await createSmallEngine().generate(PROMPT, { ...SAMPLE, seed: 9 });
    expect(a).toEqual(b);
    const engine = createSmallEngine();
    const greedy = await engine.generate(PROMPT, { ...SAMPLE, temperature: 0, topLogprobs: 3 });
    greedy.topLogprobs!.forEach((alts, i) => {
      expect(alts).toHaveLength(3);
      expect(alts[0]!.id).toBe(greedy.outputIds[i]);
      expect(alts[0]!.logprob).toBeCloseTo(greedy.logprobs[i]!, 10);
      expect(alts[0]!.logprob).toBeGreaterThanOrEqual(alts[1]!.logprob);
    });
  });

  it("keeps the nucleus: top-p 1e-6 samples the most likely token", async () => {
    const engine = createSmallEngine();
    const greedy = await engine.generate(PROMPT, { ...SAMPLE, temperature: 0 });
    const nucleus = await engine.generate(PROMPT, { ...SAMPLE, temperature: 1, topP: 1e-6, seed: 11 });
    expect(nucleus.outputIds).toEqual(greedy.outputIds);
  });

  it("stops after a stop id, keeping it, and reports the finish reason", async () => {
    const engine = createSmallEngine();
    const free = await engine.generate(PROMPT, { ...SAMPLE, seed: 7 });
    const stopAt = free.outputIds[3]!;
    const stopped = await engine.generate(PROMPT, { ...SAMPLE, seed: 7, stopIds: [stopAt] });
    const firstStop = free.outputIds.indexOf(stopAt);
    expect(stopped.outputIds).toEqual(free.outputIds.slice(0, firstStop + 1));
    expect(stopped.finishReason).toBe("stop");
    expect(free.finishReason).toBe("length");
    expect(stopped.version).toBe(0);
  });

  it("stops at the context limit and refuses prompts that fill it", async () => {
    const engine = createSmallEngine();
    const prompt = Array.from({ length: 28 }, (_, i) => i % 24);
    const out = await engine.generate(prompt, { ...SAMPLE, maxTokens: 100, seed: 1 });
    expect(out.outputIds).toHaveLength(4);
    expect(out.finishReason).toBe("length");
    const full = Array.from({ length: 32 }, () => 1);
    await expect(engine.generate(full, SAMPLE)).rejects.toMatchObject({ code: "AJ_ERR_EMBEDDED_CONTEXT_OVERFLOW" });
    await expect(engine.generate([], SAMPLE)).rejects.toMatchObject({ code: "AJ_ERR_EMBEDDED_INPUT" });
    await expect(engine.generate([1, 99], SAMPLE)).rejects.toMatchObject({ code: "AJ_ERR_EMBEDDED_INPUT" });
  });

  it("builds the default model and refuses a dim that heads do not divide", () => {
    const engine = createEmbeddedEngine({
      vocabSize: 100,
      model: EmbeddedModelSchema.parse({}),
      optimizer: OptimizerSchema.parse({}),
    });
    expect(engine.maxContext).toBe(256);
    expect(engine.kind).toBe("embedded");
    expect(() =>
      createEmbeddedEngine({
        vocabSize: 100,
        model: EmbeddedModelSchema.parse({ dim: 30, heads: 4 }),
        optimizer: OptimizerSchema.parse({}),
      }),
    ).toThrow(expect.objectContaining({ code: "AJ_ERR_EMBEDDED_CONFIG" }));
  });
});
