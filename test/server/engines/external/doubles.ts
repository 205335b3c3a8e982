import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterAll, afterEach, beforeAll } from "vitest";
import { EngineSchema } from "../../../../server/config/run-config.ts";
import { buildVllmDouble, type VllmDouble, type VllmDoubleOptions } from "../../../doubles/vllm-double.ts";
import type { OpenAITokensEngineConfig } from "../../../../server/engines/openai-tokens/openai-tokens-engine.ts";
import { buildTrainerDouble, type TrainerDouble, type TrainerDoubleOptions } from "../../../doubles/trainer-double.ts";

/** Starts the vLLM and trainer test doubles on loopback sockets; `close` stops them all. */
export interface DoubleRig {
  replicas: Array<VllmDouble & { url: string }>;
  trainer: TrainerDouble & { url: string };
  config(extra?: Partial<OpenAITokensEngineConfig>): OpenAITokensEngineConfig;
  close(): Promise<void>;
}

async function listen(app: FastifyInstance): Promise<string> {
  return app.listen({ host: "127.0.0.1", port: 0 });
}

export async function startDoubles(opts: { replicas?: number; vllm?: VllmDoubleOptions; trainer?: TrainerDoubleOptions } = {}): Promise<DoubleRig> {
  const apps: FastifyInstance[] = [];
  const replicas: DoubleRig["replicas"] = [];
  for (let i = 0; i < (opts.replicas ?? 2); i++) {
    const d = buildVllmDouble({ model: "Qwen/Qwen2.5-7B-Instruct", ...opts.vllm });
    apps.push(d.app);
    replicas.push(Object.assign(d, { url: await listen(d.app) }));
  }
  const t = buildTrainerDouble({ model: "Qwen/Qwen2.5-7B-Instruct", ...opts.trainer });
  apps.push(t.app);
  const trainer = Object.assign(t, { url: await listen(t.app) });
  return {
    replicas,
    trainer,
    config(extra = {}) {
      const parsed = EngineSchema.parse({
        kind: "openai-tokens",
        baseUrls: replicas.map((r) => r.url),
        model: "Qwen/Qwen2.5-7B-Instruct",
        maxContext: 4096,
        trainer: { url: trainer.url },
        ...extra,
      });
      if (parsed.kind !== "openai-tokens") throw new Error("unreachable");
      return parsed;
    },
    async close() {
      await Promise.all(apps.map((a) => a.close()));
    },
  };
}

/**
 * Doubles and a scratch folder for each test of the calling file, both gone after each test (it registers
 * an `afterEach`): `start` starts the doubles, `tempDir` makes the folder (named from `prefix`).
 */
export function doublesPerTest(prefix = "aj-doubles-"): { start: typeof startDoubles; tempDir(): Promise<string> } {
  let rig: DoubleRig | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await rig?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    rig = dir = undefined;
  });
  return {
    start: async (opts) => (rig = await startDoubles(opts)),
    tempDir: async () => (dir = await mkdtemp(join(tmpdir(), prefix))),
  };
}

/** Doubles for the calling `describe` block: started before its first test, closed after its last; `rig()` gives them. */
export function doublesPerSuite(opts: Parameters<typeof startDoubles>[0]): () => DoubleRig {
  let rig: DoubleRig | undefined;
  beforeAll(async () => {
    rig = await startDoubles(opts);
  });
  afterAll(async () => {
    await rig?.close();
  });
  return () => rig!;
}

/** A closed loopback port: connections to it are refused. */
export async function deadUrl(): Promise<string> {
  const d = buildVllmDouble();
  const url = await d.app.listen({ host: "127.0.0.1", port: 0 });
  await d.app.close();
  return url;
}
