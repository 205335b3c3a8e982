import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAITokensEngine } from "../../../../server/engines/openai-tokens/index.ts";
import { buildVllmDouble } from "../../../doubles/vllm-double.ts";
import { createTrainerClient } from "../../../../server/engines/trainer/trainer-client.ts";

const SERVICE_DIR = fileURLToPath(new URL("../../../../server/engines/torch-trainer/", import.meta.url));
const hasPython = spawnSync("python3", ["--version"]).status === 0;
if (!hasPython) console.warn("\n!!! SKIPPED: python3 not found; the TS client vs Python service protocol test did NOT run\n");

/** The Python service's HTTP layer over its backend test double (no torch): the TS client against the real Python protocol code. */
describe.skipIf(!hasPython)("TS trainer client against the Python service's protocol layer", () => {
  let child: ChildProcess | undefined;
  let url = "";

  beforeAll(async () => {
    child = spawn("python3", ["-m", "tests.serve_double"], { cwd: SERVICE_DIR, stdio: ["pipe", "pipe", "inherit"] });
    const lines = createInterface({ input: child.stdout! });
    const port = await new Promise<string>((resolve, reject) => {
      lines.once("line", (l) => resolve(l.replace("listening ", "")));
      child!.once("exit", (code) => reject(new Error(`python service exited ${code}`)));
    });
    url = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child!.once("exit", r));
    child.stdin!.end();
    await exited;
  });

  it("speaks the same protocol v1: status, step, version conflict, field errors", async () => {
    const client = createTrainerClient({ url });
    expect(await client.status()).toMatchObject({ protocol: 1, version: 0, mode: "lora" });
    await expect(
      client.trainStep(0, { samples: [{ tokenIds: [1, 2, 3], lossMask: [0, 1], logprobs: [0, -1, -1], advantage: 1, weight: 1 }] }),
    ).rejects.toMatchObject({ status: 400, trainerCode: "invalid_request" });
    await expect(client.trainStep(3, { samples: [{ tokenIds: [1, 2], lossMask: [0, 1], logprobs: [0, -1], advantage: 1, weight: 1 }] })).rejects.toMatchObject({
      status: 409,
      trainerCode: "version_conflict",
    });
  });

  it("runs the engine loop: generate -> train -> publish -> served by the new adapter", async () => {
    const vllm = buildVllmDouble({ model: "m" });
    const vllmUrl = await vllm.app.listen({ host: "127.0.0.1", port: 0 });
    try {
      const engine = createOpenAITokensEngine({
        kind: "openai-tokens",
        baseUrls: [vllmUrl],
        model: "m",
        maxContext: 1024,
        trainer: { url, timeoutMs: 30_000 },
        api: "vllm",
        weights: "lora",
        adapterPrefix: "m",
        requestTimeoutMs: 30_000,
        verifyServedTokens: true,
      });
      const g = await engine.generate([4, 5], { maxTokens: 3, temperature: 1, topP: 1, seed: 1, stopIds: [] });
      const before = engine.version();
      expect(before).toBe(0);
      const m = await engine.train({ samples: [{ tokenIds: [4, 5, ...g.outputIds], lossMask: [0, 0, 1, 1, 1], logprobs: [0, 0, ...g.logprobs], advantage: 1, weight: 1 }] });
      expect(m.version).toBe(before + 1);
      const next = await engine.generate([4, 5], { maxTokens: 3, temperature: 1, topP: 1, seed: 1, stopIds: [] });
      expect(next.version).toBe(before + 1);
      expect(vllm.served.at(-1)?.model).toBe(`m-v${before + 1}`);
    } finally {
      await vllm.app.close();
    }
  });

  it("a step sent again with its step_id gets the answer it lost, and is applied once", async () => {
    const client = createTrainerClient({ url });
    const { version, steps } = await client.status();
    const batch = { samples: [{ tokenIds: [7, 8, 9], lossMask: [0, 1, 1], logprobs: [0, -1, -2], advantage: 1, weight: 1 }] };
    const first = await client.trainStep(version, batch, "retry-me");
    expect(first.version).toBe(version + 1);
    expect(await client.trainStep(version, batch, "retry-me")).toEqual(first);
    expect(await client.status()).toMatchObject({ version: version + 1, steps: steps + 1 });
    await expect(client.trainStep(version, batch, "another")).rejects.toMatchObject({ status: 409, trainerCode: "version_conflict" });
  });
});
