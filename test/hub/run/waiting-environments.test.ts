import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TrainingService } from "../../../hub/run/service.ts";
import { startLocalClients } from "../../../hub/swarm/local-clients.ts";
import { prepareEnvironments } from "../../../hub/train/prepare-environments.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";
import { smallConfig, waitFor } from "./helpers.ts";

afterAll(removeTempDirs);

// Regression: a run whose clients could not run one environment of its mix stopped training once the
// planned batches of the others were played, and said nothing: the log and the engine status showed a
// rolling run with no episode in flight.
describe("a run whose connected clients cannot run one of its environments", () => {
  it("warns in its log and lists it in /v1/engine/status, then trains to the end once a client for it connects", { timeout: 240_000 }, async () => {
    const config = await smallConfig("tasks", 2);
    config.environments = [
      { ...config.environments[0]!, name: "arith", weight: 1 },
      { ...config.environments[0]!, name: "countdown", weight: 1 },
    ];
    config.batching.filterEqualRewards = false;
    const project = tempDir("waiting-envs");
    const logged: Array<{ level: string; message: string }> = [];
    const service = await TrainingService.listen({
      host: "127.0.0.1",
      port: 0,
      projectDir: project,
      runDir: join(project, "run"),
      config,
      log: (level, message) => void logged.push({ level, message }),
    });
    const envs = await prepareEnvironments(config, { projectDir: project, maxInstances: 8, log: () => undefined });
    const clientsOf = (names: string[]) =>
      startLocalClients({
        url: service.localOrigin(),
        token: service.tokens().clientTokens[0]!,
        count: 1,
        environments: envs.filter((e) => names.includes(e.name)).map((e) => ({ runtime: e.runtime, hash: e.installed.sha256 })),
        concurrency: 4,
        agreeSyncEvery: 0,
      });
    const started: Array<Awaited<ReturnType<typeof clientsOf>>> = [];
    try {
      await service.start();
      started.push(await clientsOf(["arith"]));
      const waiting = await waitFor(() => (service.status().waiting.length > 0 ? service.status().waiting : undefined), 60_000, 100);
      expect(waiting).toMatchObject([{ env: "countdown" }]);
      expect(waiting[0]!.queued).toBeGreaterThan(0);
      expect(waiting[0]!.message).toMatch(/no connected client can run countdown@1\.0\.0 .*training waits for them.*agentjet client --envs countdown/);
      expect(logged.filter((l) => l.level === "warn" && l.message.includes("no connected client can run countdown@"))).toHaveLength(1);
      expect(service.status().state).toBe("rolling");

      started.push(await clientsOf(["countdown"]));
      const result = await service.whenEnded()!;
      expect(result).toMatchObject({ reason: "done", versions: { main: 2 } });
      expect(logged.some((l) => l.level === "info" && /^countdown@1\.0\.0: '.+' can run it/.test(l.message))).toBe(true);
    } finally {
      await Promise.all(started.map((c) => c.stop()));
      await Promise.all(envs.map((e) => e.runtime.close()));
      await service.close();
    }
  });
});
