import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { TrainingService } from "../../../hub/run/service.ts";
import { startLocalClients } from "../../../hub/swarm/local-clients.ts";
import { prepareEnvironments } from "../../../hub/train/prepare-environments.ts";
import { runTraining } from "../../../hub/train/run-training.ts";
import type { StrategyName } from "../../../server/training/batching-strategies.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";
import { quiet } from "../train/helpers.ts";
import { smallConfig } from "./helpers.ts";

afterAll(removeTempDirs);

const STRATEGIES: StrategyName[] = ["episodes", "tasks", "valid-tasks", "any-client", "all-clients"];

/** Rows a weight sync must never leave behind: episodes registered and aborted because claims were paused. */
function junkRows(runDir: string): number {
  const db = new Database(join(runDir, "run.db"), { readonly: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM episodes WHERE abort_reason LIKE '%claims paused%'").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe("every batching strategy reaches a training step", () => {
  for (const strategy of STRATEGIES) {
    it(`agentjet train, ${strategy}`, { timeout: 240_000 }, async () => {
      const config = await smallConfig(strategy, 2);
      config.clients.local = 2;
      const project = tempDir(`strat-train-${strategy}`);
      const runDir = join(project, "run");
      const result = await runTraining({ config, runDir, projectDir: project, port: 0, progress: quiet, report: false });
      expect(result).toMatchObject({ reason: "done", versions: { main: 2 } });
      expect(junkRows(runDir)).toBe(0);
    });

    it(`agentjet serve with two remote-style clients, ${strategy}`, { timeout: 240_000 }, async () => {
      const config = await smallConfig(strategy, 2);
      const project = tempDir(`strat-serve-${strategy}`);
      const runDir = join(project, "run");
      const service = await TrainingService.listen({ host: "127.0.0.1", port: 0, projectDir: project, runDir, config, log: () => undefined });
      try {
        await service.start();
        const envs = await prepareEnvironments(config, { projectDir: project, maxInstances: 8, log: () => undefined });
        const agree = strategy === "any-client" || strategy === "all-clients" ? 4 : 0;
        const clients = await startLocalClients({
          url: service.localOrigin(),
          token: service.tokens().clientTokens[0]!,
          count: 2,
          environments: envs.map((e) => ({ runtime: e.runtime, hash: e.installed.sha256 })),
          concurrency: 4,
          agreeSyncEvery: agree,
        });
        try {
          const result = await service.whenEnded()!;
          expect(result).toMatchObject({ reason: "done", versions: { main: 2 } });
        } finally {
          await clients.stop();
          await Promise.all(envs.map((e) => e.runtime.close()));
        }
      } finally {
        await service.close();
      }
      expect(junkRows(runDir)).toBe(0);
    });
  }
});
