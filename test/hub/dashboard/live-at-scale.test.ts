import { join } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClientActivity } from "../../../hub/dashboard/client-activity.ts";
import { dashboardRoutes } from "../../../hub/dashboard/dashboard-routes.ts";
import type { DashboardSource } from "../../../hub/dashboard/dashboard-source.ts";
import { LiveFeed } from "../../../hub/dashboard/live-feed.ts";
import type { LiveSnapshot } from "../../../hub/dashboard/live-snapshot.ts";
import { LoginCodes } from "../../../hub/dashboard/login-codes.ts";
import type { EngineStatus } from "../../../hub/run/engine-status.ts";
import { installAuth } from "../../../server/app/auth.ts";
import { loadRunConfig } from "../../../server/config/load-run-config.ts";
import { openRunDb } from "../../../server/db/run-db.ts";
import { createEpisodeStore, type EpisodeStore } from "../../../server/episodes/episode-store.ts";
import { SamplePool } from "../../../server/training/index.ts";
import { seedRunDb } from "../../helpers/seed-run-db.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";

const ADMIN = "test-admin-token-0123456789abcdef";
const RECORDED = 100_000;
const IN_FLIGHT = 1_000;
const CLIENTS = 100;

/** TEST DOUBLE of one environment's runtime, by its counters only: at its instance cap with episodes waiting. */
const SANDBOX = { name: "arith", runtime: { stats: () => ({ live: 4, idle: 0, waiting: 3, started: 9, replaced: 2, failures: {} }) } } as never;

let app: FastifyInstance;
let db: ReturnType<typeof openRunDb>;
let store: EpisodeStore;

beforeAll(async () => {
  const dir = tempDir("dash-live-scale");
  seedRunDb(join(dir, "run.db"), { episodes: RECORDED, abortEvery: 20, withCalls: 100 });
  const loaded = await loadRunConfig(join(import.meta.dirname, "..", "..", "..", "examples", "quickstart.yaml"));
  if (loaded.kind !== "ok") throw new Error("examples/quickstart.yaml does not load");
  const config = loaded.config;
  db = openRunDb(join(dir, "run.db"));
  store = createEpisodeStore({ db, policies: ["main"], frozen: [], reclaimTimer: false });
  const activity = new ClientActivity();
  for (let c = 0; c < CLIENTS; c++) activity.connected({ type: "hello", protocol: 1, clientId: `client-${c}`, envs: [{ name: "arith", version: "1.0.0", hash: "h".repeat(64), dev: false }], concurrency: 10, running: [] } as never);
  for (let i = 0; i < IN_FLIGHT; i++) {
    const episodeId = `live-${i}`;
    store.register({ episodeId, taskId: `t-${i}`, env: "arith", agents: { solver: { kind: "policy", target: "main" } } });
    store.claim({ episodeId, clientId: `client-${i % CLIENTS}` });
    activity.sent(`client-${i % CLIENTS}`, { type: "assign", episode: { episodeId } } as never);
  }
  const status: EngineStatus = { state: "rolling", step: 10, versions: { main: 10 }, configured: true, starts: 1, runDir: dir, clients: [], inFlight: IN_FLIGHT, waiting: [], lastRun: null, error: null };
  // TEST DOUBLE of the scheduler's counters (the scheduler is not under test here).
  const scheduler = { stats: () => ({ clients: CLIENTS, connected: CLIENTS, queued: 0, inFlight: IN_FLIGHT, assigned: 0, ended: 0, aborted: 0, lost: 0, retried: 0, failedGroups: 0, staleResults: 0, batchesCompleted: 10 }) };
  const source: DashboardSource = {
    status: () => status,
    config: () => config,
    run: () => ({ config, db, store, policies: new Map(), scheduler, pool: new SamplePool(db), envs: [SANDBOX] }),
    runDir: () => dir,
    feed: new LiveFeed(),
    clients: () => activity.list(),
  };
  app = Fastify();
  installAuth(app, { tokens: { adminToken: ADMIN, clientTokens: [] } });
  await app.register(async (scope) => dashboardRoutes(scope, source, { login: { codes: new LoginCodes(), adminToken: ADMIN } }));
  await app.ready();
}, 120_000);

afterAll(async () => {
  await app?.close();
  store?.close();
  db?.close();
  removeTempDirs();
});

/** One admin GET; its body. How fast these answer at this size is bench/dashboard.bench.ts's to measure. */
async function get(url: string): Promise<string> {
  const res = await app.inject({ method: "GET", url, headers: { authorization: `Bearer ${ADMIN}` } });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

describe(`the dashboard with ${IN_FLIGHT.toLocaleString("en")} episodes in flight and ${RECORDED.toLocaleString("en")} recorded`, () => {
  it("answers the live snapshot, whose size follows the clients, not the episodes in flight", { timeout: 60_000 }, async () => {
    const body = await get("/v1/dashboard/live");
    const snapshot = JSON.parse(body) as LiveSnapshot;
    expect(snapshot.queue).toMatchObject({ inFlight: IN_FLIGHT, claimed: IN_FLIGHT });
    expect(snapshot.clients).toHaveLength(CLIENTS);
    expect(snapshot.clients.reduce((n, c) => n + c.inFlight, 0)).toBe(IN_FLIGHT);
    expect(body).not.toContain("live-999");
  });

  it("pages the episode list, opens an episode and lists failures", { timeout: 60_000 }, async () => {
    expect(JSON.parse(await get("/v1/dashboard/episodes?limit=50")).episodes).toHaveLength(50);
    expect(JSON.parse(await get(`/v1/dashboard/episodes/ep-${String(RECORDED - 1).padStart(7, "0")}`)).calls).toHaveLength(1);
    expect(JSON.parse(await get("/v1/dashboard/failures")).failures).toHaveLength(20);
  });

  it("exports the sandboxes by state and the episodes waiting for one in /metrics", async () => {
    const text = await get("/metrics");
    expect(text).toContain('agentjet_sandbox_instances{env="arith",state="live"} 4');
    expect(text).toContain('agentjet_sandbox_waiting{env="arith"} 3');
    expect(text).toContain('agentjet_sandbox_replaced_total{env="arith"} 2');
  });
});
