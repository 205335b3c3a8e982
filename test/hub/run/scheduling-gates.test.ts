import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { TrainingService } from "../../../hub/run/service.ts";
import { startLocalClients } from "../../../hub/swarm/local-clients.ts";
import { prepareEnvironments } from "../../../hub/train/prepare-environments.ts";
import type { RunConfig } from "../../../server/config/run-config.ts";
import { SwarmClient } from "../../../sdk/swarm/client.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";
import { smallConfig, waitFor } from "./helpers.ts";

afterAll(removeTempDirs);

/** What the run's own database says: episodes registered for training, and episodes pooled untrained. */
function counts(runDir: string): { registered: number; pooled: number } {
  const db = new Database(join(runDir, "run.db"), { readonly: true, fileMustExist: true });
  try {
    db.pragma("busy_timeout = 5000");
    const registered = (db.prepare("SELECT count(*) AS n FROM episodes WHERE eval = 0").get() as { n: number }).n;
    const pooled = (db.prepare("SELECT count(DISTINCT episode_id) AS n FROM training_pool_units").get() as { n: number }).n;
    return { registered, pooled };
  } finally {
    db.close();
  }
}

/** A started service on `config` with its environments prepared; `body` gets them, everything is closed after. */
async function withService(
  name: string,
  config: RunConfig,
  body: (s: { service: TrainingService; runDir: string; envs: Awaited<ReturnType<typeof prepareEnvironments>> }) => Promise<void>,
): Promise<void> {
  const project = tempDir(name);
  const runDir = join(project, "run");
  const service = await TrainingService.listen({ host: "127.0.0.1", port: 0, projectDir: project, runDir, config, log: () => undefined });
  try {
    await service.start();
    const envs = await prepareEnvironments(config, { projectDir: project, maxInstances: 8, log: () => undefined });
    try {
      await body({ service, runDir, envs });
    } finally {
      await Promise.all(envs.map((e) => e.runtime.close()));
    }
  } finally {
    await service.close();
  }
}

describe("scheduling gates through the assembled run", () => {
  it("batching.maxCachedEpisodes pauses scheduling until a training step", { timeout: 120_000 }, async () => {
    const cap = 3;
    const concurrency = 2;
    // any-client: no batch is ready until a client agrees, so the pool reaches the cap and stays there.
    const config = await smallConfig("any-client", 20);
    config.batching.maxCachedEpisodes = cap;
    await withService("cap-pause", config, async ({ service, runDir, envs }) => {
      const clients = await startLocalClients({
        url: service.localOrigin(),
        token: service.tokens().clientTokens[0]!,
        count: 1,
        environments: envs.map((e) => ({ runtime: e.runtime, hash: e.installed.sha256 })),
        concurrency,
      });
      try {
        let maxPooled = 0;
        const sample = () => {
          const c = counts(runDir);
          maxPooled = Math.max(maxPooled, c.pooled);
          return c;
        };
        // The pool reaches the cap; what was registered by then is all that may run until a step.
        await waitFor(() => sample().pooled >= cap, 60_000, 20);
        expect(service.status().step).toBe(0);
        // Everything registered before the cap ends (the pool may pass the cap by that much), then nothing
        // more. run.db shows a registration once the writer thread has committed it, a few ms after the
        // scheduler made it (an ended episode's pool entry can be there first): the count is read once it
        // holds still, then must stay.
        const settle = async (): Promise<number> => {
          await waitFor(() => clients.clients[0]!.running().length === 0 && sample().pooled >= cap, 60_000, 20);
          let registered = sample().registered;
          await waitFor(async () => {
            await new Promise((r) => setTimeout(r, 100));
            const now = sample().registered;
            const still = now === registered;
            registered = now;
            return still;
          }, 10_000, 0);
          for (let i = 0; i < 10; i++) {
            expect(sample().registered).toBe(registered);
            await new Promise((r) => setTimeout(r, 50));
          }
          return registered;
        };
        const registered = await settle();
        expect(sample().pooled).toBe(registered);
        expect(maxPooled).toBeLessThanOrEqual(cap + concurrency);
        // A sync takes the pool and scheduling resumes. A batch whose groups all have equal rewards trains
        // nothing (no step), so agree again at each cap until one has trained and scheduling resumed after it.
        for (let round = 0; ; round++) {
          const before = sample().registered;
          expect(service.agreeSync("local-0")).toBe(true);
          await waitFor(() => sample().registered > before, 60_000, 20);
          if (service.status().step >= 1) break;
          expect(round).toBeLessThan(10);
          maxPooled = 0;
          await waitFor(() => sample().pooled >= cap, 60_000, 20);
          await settle();
          expect(maxPooled).toBeLessThanOrEqual(cap + concurrency);
        }
        // After the training step the pool stops at the cap again.
        maxPooled = 0;
        await waitFor(() => sample().pooled >= cap, 60_000, 20);
        await settle();
        expect(maxPooled).toBeLessThanOrEqual(cap + concurrency);
        await service.stop();
      } finally {
        await clients.stop();
      }
    });
  });

  it("all-clients: a client whose /swarm socket dies stops counting at once", { timeout: 120_000 }, async () => {
    const config = await smallConfig("all-clients", 1);
    // Neither idling out nor the drain deadline may be what makes the batch ready.
    config.batching.clientIdleS = 600;
    config.server.syncTimeoutS = 600;
    // The step must train whatever the pool holds then: on a loaded machine it could hold only groups whose
    // rewards are all equal, and a step without signal trains nothing (version 0; the agreements start over).
    config.batching.filterEqualRewards = false;
    await withService("all-clients-kill", config, async ({ service, runDir, envs }) => {
      const token = service.tokens().clientTokens[0]!;
      const environments = envs.map((e) => ({ runtime: e.runtime, hash: e.installed.sha256 }));
      // The doomed client reaches the service through a TCP relay, so its socket can die without a close frame.
      const port = Number(new URL(service.localOrigin()).port);
      const pipes = new Set<Socket>();
      const relay = createServer((inbound) => {
        const outbound = connect(port, "127.0.0.1");
        pipes.add(inbound).add(outbound);
        inbound.pipe(outbound).pipe(inbound);
        inbound.on("error", () => undefined);
        outbound.on("error", () => undefined);
      });
      await new Promise<void>((r) => relay.listen(0, "127.0.0.1", () => r()));
      const relayPort = (relay.address() as AddressInfo).port;
      const kept = await startLocalClients({ url: service.localOrigin(), token, count: 1, environments, concurrency: 2 });
      const doomed = new SwarmClient({ url: `http://127.0.0.1:${relayPort}`, token, clientId: "doomed", environments, concurrency: 2 });
      await doomed.start();
      try {
        // Both clients count: each has ended a rewarded episode (pooled under its id) since the last sync.
        await waitFor(() => {
          const db = new Database(join(runDir, "run.db"), { readonly: true, fileMustExist: true });
          try {
            const rows = db.prepare("SELECT DISTINCT client_id AS c FROM training_pool_units").all() as { c: string | null }[];
            return rows.some((r) => r.c === "doomed") && rows.some((r) => r.c === "local-0");
          } finally {
            db.close();
          }
        }, 60_000, 20);
        expect(service.agreeSync("local-0")).toBe(true);
        // The doomed client has not agreed: no step while it is connected.
        await new Promise((r) => setTimeout(r, 500));
        expect(service.status().step).toBe(0);
        relay.close();
        for (const p of pipes) p.destroy();
        // local-0's agreement alone now makes the batch ready (and the dead client's episodes do not hold the drain).
        // Past 90 s, what the service says (ready or not, draining, in flight) goes into the failure.
        const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`not ended after 90 s: ${JSON.stringify(service.status())}`)), 90_000).unref());
        const result = await Promise.race([service.whenEnded()!, late]);
        expect(result).toMatchObject({ reason: "done", versions: { main: 1 } });
      } finally {
        relay.close();
        for (const p of pipes) p.destroy();
        await doomed.stop();
        await kept.stop();
      }
    });
  });
});
