import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import { ClientActivity } from "../hub/dashboard/client-activity.ts";
import { dashboardRoutes } from "../hub/dashboard/dashboard-routes.ts";
import type { DashboardSource } from "../hub/dashboard/dashboard-source.ts";
import { episodePageQuery, listEpisodes } from "../hub/dashboard/episode-query.ts";
import { LiveFeed } from "../hub/dashboard/live-feed.ts";
import { LoginCodes } from "../hub/dashboard/login-codes.ts";
import type { EngineStatus } from "../hub/run/engine-status.ts";
import { installAuth } from "../server/app/index.ts";
import { loadRunConfig } from "../server/config/index.ts";
import { openRunDb } from "../server/db/index.ts";
import { createEpisodeStore } from "../server/index.ts";
import { SamplePool } from "../server/training/index.ts";
import { seedRunDb } from "../test/helpers/seed-run-db.ts";
import { type Bench, fmt, median, quantile, timeRuns } from "./harness.ts";

const ADMIN = "bench-admin-token-0123456789abcdef";

/**
 * The dashboard at scale: 100,000 recorded episodes (one call each) and 1,000 in flight across 100
 * clients, read through its routes (fastify inject, the real auth hook). Keyset pages against OFFSET
 * pages at the same depth show why the list never counts rows to skip.
 */
export const bench: Bench = {
  name: "dashboard",
  async run({ quick, log }) {
    const episodes = quick ? 20_000 : 100_000;
    const inFlight = 1000;
    const runs = quick ? 10 : 30;
    const dir = mkdtempSync(join(tmpdir(), "agentjet-bench-dashboard-"));
    try {
      log(`seeding ${episodes} episodes with a call each`);
      seedRunDb(join(dir, "run.db"), { episodes, abortEvery: 20, withCalls: episodes });
      const loaded = await loadRunConfig(join(import.meta.dirname, "..", "examples", "quickstart.yaml"));
      if (loaded.kind !== "ok") throw new Error("examples/quickstart.yaml does not load");
      const config = loaded.config;
      const db = openRunDb(join(dir, "run.db"));
      const store = createEpisodeStore({ db, policies: ["main"], frozen: [], reclaimTimer: false });
      const activity = new ClientActivity();
      for (let c = 0; c < 100; c++) activity.connected({ type: "hello", protocol: 1, clientId: `client-${c}`, envs: [{ name: "arith", version: "1.0.0", hash: "h".repeat(64), dev: false }], concurrency: 10, running: [] } as never);
      for (let i = 0; i < inFlight; i++) {
        const episodeId = `live-${i}`;
        store.register({ episodeId, taskId: `t-${i}`, env: "arith", agents: { solver: { kind: "policy", target: "main" } } });
        store.claim({ episodeId, clientId: `client-${i % 100}` });
        activity.sent(`client-${i % 100}`, { type: "assign", episode: { episodeId } } as never);
      }
      const status: EngineStatus = { state: "rolling", step: 10, versions: { main: 10 }, configured: true, starts: 1, runDir: dir, clients: [], inFlight, waiting: [], lastRun: null, error: null };
      const pool = new SamplePool(db);
      // BENCH DOUBLE of the scheduler's counters (the scheduler itself is not under test here).
      const scheduler = { stats: () => ({ clients: 100, connected: 100, queued: 0, inFlight, assigned: 0, ended: 0, aborted: 0, lost: 0, retried: 0, failedGroups: 0, staleResults: 0, batchesCompleted: 10 }) };
      const source: DashboardSource = {
        status: () => status,
        config: () => config,
        run: () => ({ config, db, store, policies: new Map(), scheduler, pool, envs: [] }),
        runDir: () => dir,
        feed: new LiveFeed(),
        clients: () => activity.list(),
      };
      const app = Fastify();
      installAuth(app, { tokens: { adminToken: ADMIN, clientTokens: [] } });
      await app.register(async (scope) => dashboardRoutes(scope, source, { login: { codes: new LoginCodes(), adminToken: ADMIN } }));
      await app.ready();
      const get = async (url: string): Promise<string> => {
        const res = await app.inject({ method: "GET", url, headers: { authorization: `Bearer ${ADMIN}` } });
        if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
        return res.body;
      };

      const deep = Math.floor(episodes / 2);
      // A cursor as deep as row `deep`: walk there once with big pages.
      let cursor: string | null = null;
      for (let walked = 0; walked < deep; walked += 500) cursor = listEpisodes(db, {}, { ...(cursor ? { cursor } : {}), limit: 500 }).next;
      // The list's own query, paged by OFFSET instead of the cursor, for the comparison row.
      const offsetSql = episodePageQuery({}, undefined, 50).sql;
      const keysetQuery = episodePageQuery({}, cursor ?? undefined, 50);
      const coldMetrics = await timeRuns(1, () => get("/metrics"), 0);
      const cases: Array<[string, () => Promise<unknown> | unknown]> = [
        ["live snapshot (stream tick), 1,000 in flight, 100 clients", () => get("/v1/dashboard/live")],
        ["episode list: first page (50, with total count)", () => get("/v1/dashboard/episodes?limit=50")],
        [`episode list: page at row ${deep} (keyset cursor)`, () => get(`/v1/dashboard/episodes?limit=50&cursor=${cursor}`)],
        [`  its SQL alone (keyset)`, () => db.prepare(keysetQuery.sql).all(...keysetQuery.pageArgs)],
        [`  the same SQL paged by OFFSET ${deep} instead (not used; for comparison)`, () => db.prepare(`${offsetSql} OFFSET ?`).all(51, deep)],
        ["episode list: state=aborted, failure=crash (first page + total)", () => get("/v1/dashboard/episodes?limit=50&state=aborted&failure=crash")],
        ["episode list: minReward=0.9 (first page + total: a scan)", () => get("/v1/dashboard/episodes?limit=50&minReward=0.9")],
        ["episode view (calls, tokens, samples)", () => get(`/v1/dashboard/episodes/ep-${String(episodes - 5000).padStart(7, "0")}`)],
        ["failures (latest 20)", () => get("/v1/dashboard/failures")],
        ["/metrics, warm (new calls since the last scrape only)", () => get("/metrics")],
      ];
      const rows: Array<Array<string | number>> = [];
      for (const [what, fn] of cases) {
        const ms = await timeRuns(runs, fn);
        log(`${what}: median ${fmt(median(ms))} ms`);
        rows.push([what, fmt(median(ms)), fmt(quantile(ms, 0.95))]);
      }
      rows.push([`/metrics, first scrape (counts ${episodes} calls once)`, fmt(coldMetrics[0]!), "-"]);
      const keyset = Number(rows[3]![1]);
      const offset = Number(rows[4]![1]);
      await app.close();
      store.close();
      db.close();
      return [
        {
          title: `Dashboard routes over ${episodes.toLocaleString("en")} recorded episodes, ${inFlight} in flight (ms, ${runs} runs each, fastify inject)`,
          columns: ["request", "median ms", "p95 ms"],
          rows,
          notes: [
            `The list's query at row ${deep}: keyset ${fmt(keyset)} ms vs OFFSET ${fmt(offset)} ms (x${fmt(offset / keyset)}); the keyset page costs the same at any depth (compare the first page).`,
            "Target: every request the page makes while live (snapshot, a list page, an episode) well under 100 ms at this size.",
            `Load average at the end: ${loadavg().map((x) => x.toFixed(2)).join(" ")} (2 cores shared with other work).`,
          ],
        },
      ];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
