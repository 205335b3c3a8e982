import { describe, expect, it } from "vitest";
import { createSmallEngine, makeBatch } from "./small-engine.ts";

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

async function maskedLogprobMean(engine: ReturnType<typeof createSmallEngine>, s: { tokenIds: number[]; lossMask: number[] }): Promise<number> {
  const lp = await engine.scoreTokens(s.tokenIds);
  return mean(lp.filter((_, t) => s.lossMask[t] === 1));
}

describe("embedded train", () => {
  it("moves probability towards positive advantages and the version on by one", async () => {
    const engine = createSmallEngine();
    const samples = await makeBatch(engine, { samples: 8, length: 12, seed: 1 });
    const before = await Promise.all(samples.map((s) => maskedLogprobMean(engine, s)));
    const m = await engine.train({ samples });
    expect(m.version).toBe(1);
    expect(engine.version()).toBe(1);
    expect(m.tokens).toBe(8 * 6);
    expect(m.clipFraction).toBe(0);
    expect(m.gradNorm).toBeGreaterThan(0);
    expect(m.kl).toBeUndefined();
    // At ratio 1 the PPO loss is -mean(advantage) over tokens: here 0.
    expect(m.loss).toBeCloseTo(0, 6);
    const after = await Promise.all(samples.map((s) => maskedLogprobMean(engine, s)));
    samples.forEach((s, i) => {
      if (s.advantage > 0) expect(after[i]!).toBeGreaterThan(before[i]!);
      else expect(after[i]!).toBeLessThan(before[i]!);
    });
  });

  it("gives the same step for any micro-batch size", async () => {
    const a = createSmallEngine({ optimizer: { microBatch: 1 } });
    const b = createSmallEngine({ optimizer: { microBatch: 64 } });
    const samples = await makeBatch(a, { samples: 6, length: 10, seed: 2 });
    const ma = await a.train({ samples });
    const mb = await b.train({ samples });
    expect(ma.loss).toBe(mb.loss);
    expect(await a.scoreTokens(samples[0]!.tokenIds)).toEqual(await b.scoreTokens(samples[0]!.tokenIds));
  });

  it("weights samples and normalises by the batch's masked tokens", async () => {
    const engine = createSmallEngine();
    const samples = await makeBatch(engine, { samples: 2, length: 10, seed: 3 });
    samples[0]!.advantage = 1;
    samples[1]!.advantage = 1;
    samples[1]!.weight = 3;
    const m = await engine.train({ samples });
    // Ratio 1 everywhere: loss = -(5·1·1 + 5·3·1) / 10.
    expect(m.loss).toBeCloseTo(-2, 6);
  });

  it("clips ratios on later epochs and reports the KL to the reference", async () => {
    const engine = createSmallEngine({ optimizer: { epochs: 3, klCoef: 0.5, lr: 3e-2 } });
    const samples = await makeBatch(engine, { samples: 8, length: 12, seed: 4 });
    const first = await engine.train({ samples });
    expect(first.kl).toBeGreaterThan(0);
    expect(first.clipFraction).toBeGreaterThan(0);
    const second = await engine.train({ samples });
    expect(second.kl!).toBeGreaterThan(first.kl!);
    expect(engine.version()).toBe(2);
  });

  it("makes generation wait for a step in progress", async () => {
    const engine = createSmallEngine();
    const samples = await makeBatch(engine, { samples: 4, length: 10, seed: 5 });
    const training = engine.train({ samples });
    const out = await engine.generate([1, 2, 3], { maxTokens: 2, temperature: 1, topP: 1, stopIds: [], seed: 1 });
    expect(out.version).toBe(1);
    await training;
  });

  it("makes a step wait for a streamed generation in progress: the reply is the old weights' throughout", async () => {
    const params = { maxTokens: 12, temperature: 1, topP: 1, stopIds: [] as number[], seed: 3 };
    const untouched = await createSmallEngine().generate([1, 2, 3], params);
    const engine = createSmallEngine();
    const samples = await makeBatch(engine, { samples: 8, length: 16, seed: 5 });
    let training: Promise<unknown> | null = null;
    // The first streamed token yields to the event loop; a step called then must not run under the reply.
    const out = await engine.generate([1, 2, 3], { ...params, onToken: () => void (training ??= engine.train({ samples })) });
    expect(out).toEqual(untouched);
    await training;
    expect(engine.version()).toBe(1);
    const after = await engine.generate([1, 2, 3], params);
    expect(after.version).toBe(1);
    expect(after.logprobs).not.toEqual(untouched.logprobs);
  });

  it("moves the version on for a batch with no masked tokens, without changing weights", async () => {
    const engine = createSmallEngine();
    const ids = [1, 2, 3, 4];
    const before = await engine.scoreTokens(ids);
    const m = await engine.train({ samples: [{ tokenIds: ids, lossMask: [0, 0, 0, 0], logprobs: [0, 0, 0, 0], advantage: 1, weight: 1 }] });
    expect(m).toMatchObject({ tokens: 0, loss: 0, version: 1 });
    expect(await engine.scoreTokens(ids)).toEqual(before);
  });

  it("refuses malformed and overlong samples with coded errors", async () => {
    const engine = createSmallEngine();
    await expect(
      engine.train({ samples: [{ tokenIds: [1, 2, 3], lossMask: [0, 1], logprobs: [0, 0, 0], advantage: 1, weight: 1 }] }),
    ).rejects.toMatchObject({ code: "AJ_ERR_EMBEDDED_INPUT" });
    const long = Array.from({ length: 40 }, () => 1);
    await expect(
      engine.train({ samples: [{ tokenIds: long, lossMask: long, logprobs: long.map(() => -1), advantage: 1, weight: 1 }] }),
    ).rejects.toMatchObject({ code: "AJ_ERR_EMBEDDED_CONTEXT_OVERFLOW" });
    expect(engine.version()).toBe(0);
  });
});
