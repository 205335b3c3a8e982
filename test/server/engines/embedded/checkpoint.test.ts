import { mkdtemp, rm, truncate } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEmbeddedTokenizer } from "../../../../server/tokenizers/embedded.ts";
import { createSmallEngine, makeBatch } from "./small-engine.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "aj-embedded-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("embedded checkpoints", () => {
  it("round-trip weights, Adam state, reference and version", async () => {
    const opts = { optimizer: { klCoef: 0.2 } };
    const engine = createSmallEngine(opts);
    for (let seed = 1; seed <= 2; seed++) await engine.train({ samples: await makeBatch(engine, { samples: 4, length: 10, seed }) });
    await engine.save(dir);
    const loaded = createSmallEngine({ ...opts, model: { seed: 99 } });
    await loaded.load(dir);
    expect(loaded.version()).toBe(2);
    const probe = [3, 1, 4, 1, 5, 9, 2, 6];
    expect(await loaded.scoreTokens(probe)).toEqual(await engine.scoreTokens(probe));
    // The next step is the same too: moments, step count and the KL reference came back.
    const samples = await makeBatch(engine, { samples: 4, length: 10, seed: 3 });
    const a = await engine.train({ samples });
    const b = await loaded.train({ samples });
    expect({ ...b, durationMs: 0 }).toEqual({ ...a, durationMs: 0 });
    expect(await loaded.scoreTokens(probe)).toEqual(await engine.scoreTokens(probe));
  });

  it("initFrom takes the weights only: version 0, fresh optimizer, the KL reference set to them", async () => {
    const engine = createSmallEngine();
    for (let seed = 1; seed <= 3; seed++) await engine.train({ samples: await makeBatch(engine, { samples: 4, length: 10, seed }) });
    await engine.save(dir);
    const started = createSmallEngine({ model: { seed: 99 }, optimizer: { klCoef: 0.2 } });
    await started.initFrom(dir);
    expect(started.version()).toBe(0);
    const probe = [3, 1, 4, 1, 5, 9, 2, 6];
    expect(await started.scoreTokens(probe)).toEqual(await engine.scoreTokens(probe));
    // The reference is these weights: the first step's KL is 0 (ratio 1, nothing moved yet).
    const m = await started.train({ samples: await makeBatch(started, { samples: 4, length: 10, seed: 4 }) });
    expect(m.kl).toBeCloseTo(0, 12);
    expect(started.version()).toBe(1);
    await expect(createSmallEngine({ model: { dim: 32 } }).initFrom(dir)).rejects.toMatchObject({ field: "shape.dim" });
  });

  it("a supervised batch follows the likelihood whatever its log-probs say, and reports the mean NLL", async () => {
    const a = createSmallEngine();
    const b = createSmallEngine();
    const samples = await makeBatch(a, { samples: 4, length: 10, seed: 5 });
    const demos = samples.map((s) => ({ ...s, advantage: 1 }));
    const before = await a.scoreTokens(demos[0]!.tokenIds);
    const ma = await a.train({ samples: demos, supervised: true });
    const mb = await b.train({ samples: demos.map((s) => ({ ...s, logprobs: s.logprobs.map(() => -50) })), supervised: true });
    expect({ ...mb, durationMs: 0 }).toEqual({ ...ma, durationMs: 0 });
    const masked = demos.flatMap((s) => s.lossMask.flatMap((m, t) => (m === 1 && t > 0 ? [s] : [])));
    expect(ma.tokens).toBe(masked.length);
    expect(ma.loss).toBeGreaterThan(0);
    const after = await a.scoreTokens(demos[0]!.tokenIds);
    const gain = demos[0]!.lossMask.reduce((acc, m, t) => acc + (m === 1 && t > 0 ? after[t]! - before[t]! : 0), 0);
    expect(gain).toBeGreaterThan(0);
  });

  it("refuses a checkpoint of another shape with a coded error", async () => {
    await createSmallEngine().save(dir);
    const wider = createSmallEngine({ model: { dim: 32 } });
    await expect(wider.load(dir)).rejects.toMatchObject({ code: "AJ_ERR_EMBEDDED_CHECKPOINT_MISMATCH", field: "shape.dim" });
    const otherVocab = createSmallEngine({ vocabSize: 30 });
    await expect(otherVocab.load(dir)).rejects.toMatchObject({ field: "shape.vocabSize" });
    const untied = createSmallEngine({ model: { tiedOutput: false } });
    await expect(untied.load(dir)).rejects.toMatchObject({ field: "shape.tiedOutput" });
    expect(wider.version()).toBe(0);
  });

  it("says a checkpoint from before the embedded tokenizer's byte fallback cannot be loaded", async () => {
    await createSmallEngine({ vocabSize: 101 }).save(dir);
    const current = createSmallEngine({ vocabSize: createEmbeddedTokenizer().vocabSize });
    const err = await current.load(dir).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "AJ_ERR_EMBEDDED_CHECKPOINT_MISMATCH", field: "shape.vocabSize" });
    expect((err as Error).message).toMatch(/before the embedded tokenizer fell back to bytes/);
  });

  it("refuses a missing or torn checkpoint", async () => {
    const engine = createSmallEngine();
    await expect(engine.load(join(dir, "nothing"))).rejects.toMatchObject({ code: "AJ_ERR_EMBEDDED_CHECKPOINT_INVALID" });
    await engine.save(dir);
    await truncate(join(dir, "weights.f32"), 100);
    await expect(engine.load(dir)).rejects.toMatchObject({ code: "AJ_ERR_EMBEDDED_CHECKPOINT_INVALID" });
  });
});
