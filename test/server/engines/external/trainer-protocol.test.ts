import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createTrainerClient } from "../../../../server/engines/trainer/trainer-client.ts";
import { buildTrainerDouble } from "../../../doubles/trainer-double.ts";
import { TRAINER_PROTOCOL_HEADER, WireSampleSchema } from "../../../../server/engines/trainer/protocol.ts";

const SAMPLE = { token_ids: [1, 2, 3, 4], loss_mask: [0, 0, 1, 1], logprobs: [0, 0, -0.5, -1], advantage: 1, weight: 1 };

describe("trainer protocol v1 (test double through inject)", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("checks every sample field", () => {
    const bad = [
      { ...SAMPLE, loss_mask: [0, 1, 1] },
      { ...SAMPLE, logprobs: [0, 0, -1] },
      { ...SAMPLE, loss_mask: [1, 0, 1, 1] },
      { ...SAMPLE, loss_mask: [0, 0, 0, 0] },
      { ...SAMPLE, loss_mask: [0, 0, 2, 1] },
      { ...SAMPLE, token_ids: [1, 2, -3, 4] },
      { ...SAMPLE, token_ids: [1, 2, 3.5, 4] },
      { ...SAMPLE, weight: -1 },
      { ...SAMPLE, advantage: Number.NaN },
      { token_ids: [1, 2], loss_mask: [0, 1], logprobs: [0, 0], advantage: 1 },
    ];
    for (const b of bad) expect(WireSampleSchema.safeParse(b).success, JSON.stringify(b)).toBe(false);
    expect(WireSampleSchema.safeParse(SAMPLE).success).toBe(true);
  });

  it("answers a mask/ids length mismatch with a coded 400 naming the field", async () => {
    const { app, received } = buildTrainerDouble();
    const res = await app.inject({
      method: "POST",
      url: "/v1/train_step",
      payload: { expected_version: 0, samples: [SAMPLE, { ...SAMPLE, loss_mask: [0, 1] }] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: { code: "invalid_request", param: "samples.1.loss_mask" } });
    expect(received.trainSteps).toHaveLength(0);
  });

  it("moves the version on by one step and refuses a step at the wrong version", async () => {
    const { app, version } = buildTrainerDouble();
    const ok = await app.inject({ method: "POST", url: "/v1/train_step", payload: { expected_version: 0, samples: [SAMPLE] } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers[TRAINER_PROTOCOL_HEADER]).toBe("1");
    expect(ok.json()).toMatchObject({ version: 1, metrics: { tokens: 2, loss: -1, clip_fraction: 0 } });
    const again = await app.inject({ method: "POST", url: "/v1/train_step", payload: { expected_version: 0, samples: [SAMPLE] } });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ error: { code: "version_conflict" } });
    expect(version()).toBe(1);
    const pub = await app.inject({ method: "POST", url: "/v1/publish", payload: { version: 0 } });
    expect(pub.statusCode).toBe(409);
  });

  it("refuses another protocol version and a wrong api key", async () => {
    const { app } = buildTrainerDouble({ apiKey: "k" });
    const v2 = await app.inject({ method: "GET", url: "/v1/status", headers: { [TRAINER_PROTOCOL_HEADER]: "2", authorization: "Bearer k" } });
    expect(v2.statusCode).toBe(400);
    const noKey = await app.inject({ method: "GET", url: "/v1/status" });
    expect(noKey.statusCode).toBe(401);
    const ok = await app.inject({ method: "GET", url: "/v1/status", headers: { authorization: "Bearer k" } });
    expect(ok.json()).toMatchObject({ protocol: 1, version: 0, mode: "lora", busy: false, steps: 0 });
  });

  it("sends a prefixTree batch's samples with their trie, each sample its leaf's path", async () => {
    const double = buildTrainerDouble();
    const url = await double.app.listen({ host: "127.0.0.1", port: 0 });
    try {
      const sample = (tokenIds: number[]) => ({ tokenIds, lossMask: tokenIds.map((_, t) => (t > 0 ? 1 : 0)), logprobs: tokenIds.map(() => -1), advantage: 1, weight: 1 });
      const samples = [sample([1, 2, 3, 4]), sample([1, 2, 5]), sample([1, 2, 3, 4])];
      await createTrainerClient({ url }).trainStep(0, { samples, prefixTree: true });
      await createTrainerClient({ url }).trainStep(1, { samples });
      const [withTree, flat] = double.received.trainSteps;
      expect(flat!.tree).toBeUndefined();
      const tree = withTree!.tree!;
      expect(tree.token_ids).toHaveLength(5);
      samples.forEach((s, k) => {
        const path: number[] = [];
        for (let n = tree.leaves[k]!; n >= 0; n = tree.parents[n]!) path.unshift(tree.token_ids[n]!);
        expect(path).toEqual(s.tokenIds);
      });
      expect(withTree!.samples.map((s) => s.token_ids)).toEqual(samples.map((s) => s.tokenIds));
    } finally {
      await double.app.close();
    }
  });

  it("the client maps answers and errors through real HTTP", async () => {
    dir = await mkdtemp(join(tmpdir(), "aj-trainer-"));
    const double = buildTrainerDouble({ publishDir: dir });
    const url = await double.app.listen({ host: "127.0.0.1", port: 0 });
    try {
      const client = createTrainerClient({ url });
      expect(await client.status()).toMatchObject({ version: 0 });
      const m = await client.trainStep(0, {
        samples: [{ tokenIds: [1, 2, 3], lossMask: [0, 1, 1], logprobs: [0, -1, -1], advantage: 2, weight: 0.5 }],
      });
      expect(m).toMatchObject({ version: 1, tokens: 2, loss: -1, gradNorm: 0, clipFraction: 0 });
      await expect(client.trainStep(0, { samples: [{ tokenIds: [1, 2], lossMask: [0, 1], logprobs: [0, -1], advantage: 1, weight: 1 }] })).rejects.toMatchObject({
        code: "AJ_ERR_TRAINER_REQUEST",
        status: 409,
        trainerCode: "version_conflict",
      });
      expect(await client.publish({ version: 1, adapter_name: "a-v1" })).toEqual({ mode: "lora", version: 1, adapter_name: "a-v1", adapter_path: join(dir, "a-v1") });
      expect(await client.save(join(dir, "c"))).toEqual({ dir: join(dir, "c"), version: 1 });
      await expect(client.load(join(dir, "missing"))).rejects.toMatchObject({ trainerCode: "not_found" });
      expect(await client.load(join(dir, "c"))).toEqual({ dir: join(dir, "c"), version: 1 });
    } finally {
      await double.app.close();
    }
    await expect(createTrainerClient({ url }).status()).rejects.toMatchObject({ code: "AJ_ERR_TRAINER_UNAVAILABLE" });
  });
});
