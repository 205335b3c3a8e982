import { mkdtemp, rm, truncate } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
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

  it("refuses a missing or torn checkpoint", async () => {
    const engine = createSmallEngine();
    await expect(engine.load(join(dir, "nothing"))).rejects.toMatchObject({ code: "AJ_ERR_EMBEDDED_CHECKPOINT_INVALID" });
    await engine.save(dir);
    await truncate(join(dir, "weights.f32"), 100);
    await expect(engine.load(dir)).rejects.toMatchObject({ code: "AJ_ERR_EMBEDDED_CHECKPOINT_INVALID" });
  });
});
