import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { HttpError, parseBody } from "../../server/openai/index.ts";
import { createTokenizer, type Tokenizer } from "../../server/tokenizers/index.ts";
import { chartsFor } from "../report/charts.ts";
import { renderChartSvg } from "../report/plots.ts";
import { readMetrics } from "../report/read-metrics.ts";
import { type DashboardSource, withRunDb } from "./dashboard-source.ts";
import type { LoginCodes } from "./login-codes.ts";
import { readEpisode } from "./episode-detail.ts";
import { latestFailures, listEpisodes } from "./episode-query.ts";
import { liveSnapshot } from "./live-snapshot.ts";
import { renderMetrics } from "./prometheus-metrics.ts";

const PAGE_DIR = join(import.meta.dirname, "page");
const ASSETS: Record<string, string> = { "dashboard.js": "text/javascript; charset=utf-8", "dashboard.css": "text/css; charset=utf-8" };

// The page's own code only: no inline script, nothing from elsewhere; charts arrive as data: images.
const PAGE_HEADERS = {
  "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
};

const boolish = z.enum(["true", "false"]).transform((v) => v === "true");
const num = z.string().regex(/^-?\d+(\.\d+)?$/).transform(Number);
const EpisodeQuerySchema = z.object({
  env: z.string().min(1).max(256).optional(),
  task: z.string().min(1).max(256).optional(),
  state: z.enum(["registered", "claimed", "ended", "aborted"]).optional(),
  failure: z.string().min(1).max(64).optional(),
  minReward: num.optional(),
  maxReward: num.optional(),
  eval: boolish.optional(),
  cursor: z.string().min(1).max(2048).optional(),
  limit: z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(1).max(500)).optional(),
});
const EpisodeParamsSchema = z.object({ id: z.string().min(1).max(256) });
const LoginBodySchema = z.object({ code: z.string().min(1).max(256) });

const noRun = (): HttpError => new HttpError(404, "AJ_ERR_DASHBOARD_NO_RUN", "no run yet: configure and start the engine (its run.db is what the dashboard reads)");

export interface DashboardRoutesOptions {
  /** The one-time codes of printed links, and the admin token a code is traded for. */
  login: { codes: LoginCodes; adminToken: string | null };
  /** How often the live stream sends a snapshot, ms (default 1000). */
  tickMs?: number;
}

/**
 * The dashboard (`GET /dashboard`, a page with no build step) and what it reads: `/v1/dashboard/*` with
 * the admin token, plus `GET /metrics` (Prometheus text) with a client token. The page itself is
 * public and holds no data. The printed link carries a one-time code in its fragment (never sent to a
 * server, never in a Referer); the page trades it for the admin token at `POST /v1/dashboard/login`
 * (or the user pastes the token), keeps that in the tab's session storage and sends it as a Bearer
 * header on every call, the live stream included (server-sent events read with fetch, since
 * EventSource and WebSocket cannot send headers).
 */
export async function dashboardRoutes(app: FastifyInstance, source: DashboardSource, o: DashboardRoutesOptions): Promise<void> {
  const tickMs = o.tickMs ?? 1000;
  const streams = new Set<() => void>();
  app.addHook("onClose", async () => {
    for (const end of [...streams]) end();
  });

  app.get("/dashboard", { config: { auth: "public" } }, async (_request, reply) =>
    reply.headers(PAGE_HEADERS).type("text/html; charset=utf-8").send(readFileSync(join(PAGE_DIR, "index.html"), "utf8")),
  );
  app.get("/dashboard/assets/:file", { config: { auth: "public" } }, async (request, reply) => {
    const file = (request.params as { file: string }).file;
    const type = ASSETS[file];
    if (type === undefined) throw new HttpError(404, "AJ_ERR_ROUTE_NOT_FOUND", `no dashboard asset '${file}'`);
    return reply.headers(PAGE_HEADERS).type(type).send(readFileSync(join(PAGE_DIR, file), "utf8"));
  });

  // Public: the code is the credential. Same-origin JSON only, so no other page can spend a code.
  app.post("/v1/dashboard/login", { config: { auth: "public" } }, async (request) => {
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== `http://${request.headers.host}` && origin !== `https://${request.headers.host}`) {
      throw new HttpError(403, "AJ_ERR_CROSS_ORIGIN", `cross-origin request from '${origin}' refused`);
    }
    if ((request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase() !== "application/json") {
      throw new HttpError(415, "AJ_ERR_CONTENT_TYPE", "POST /v1/dashboard/login takes a JSON body { code }");
    }
    const { code } = parseBody(LoginBodySchema, request.body);
    if (o.login.adminToken === null || !o.login.codes.redeem(code)) {
      throw new HttpError(401, "AJ_ERR_DASHBOARD_CODE_INVALID", "this dashboard link was used or has expired: open a new one (agentjet prints one at start) or paste the admin token");
    }
    return { token: o.login.adminToken };
  });

  app.get("/v1/dashboard/live", { config: { auth: "admin" } }, async () => liveSnapshot(source));

  app.get("/v1/dashboard/stream", { config: { auth: "admin" } }, (request, reply) => {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", connection: "keep-alive", "x-accel-buffering": "no" });
    const send = (): void => void res.write(`event: live\ndata: ${JSON.stringify(liveSnapshot(source))}\n\n`);
    send();
    const timer = setInterval(send, tickMs);
    const end = (): void => {
      clearInterval(timer);
      streams.delete(end);
      res.end();
    };
    streams.add(end);
    request.raw.on("close", end);
  });

  let charts: { key: string; body: Promise<unknown> } | null = null;
  app.get("/v1/dashboard/charts", { config: { auth: "admin" } }, async () => {
    const dir = source.runDir();
    if (dir === null) throw noRun();
    const key = `${dir}\u0000${source.feed.chartVersion()}`;
    if (charts?.key !== key) {
      const entry = { key, body: renderCharts(dir, source.feed.chartVersion()) };
      entry.body.catch(() => charts === entry && (charts = null));
      charts = entry;
    }
    return charts.body;
  });

  // Server-Timing says how long the query held the event loop: the page follows the run no more often than that allows.
  app.get("/v1/dashboard/episodes", { config: { auth: "admin" } }, async (request, reply) => {
    const q = parseBody(EpisodeQuerySchema, request.query);
    const { cursor, limit, ...filter } = q;
    try {
      const started = performance.now();
      const page = withRunDb(source, (db) => listEpisodes(db, filter, { ...(cursor !== undefined ? { cursor } : {}), limit: limit ?? 50 }));
      if (page === null) throw noRun();
      reply.header("server-timing", `db;dur=${(performance.now() - started).toFixed(1)}`);
      return page;
    } catch (err) {
      if (err instanceof RangeError) throw new HttpError(400, "AJ_ERR_INVALID_REQUEST", `cursor: ${err.message}`, { param: "cursor" });
      throw err;
    }
  });

  app.get("/v1/dashboard/episodes/:id", { config: { auth: "admin" } }, async (request) => {
    const { id } = parseBody(EpisodeParamsSchema, request.params);
    const merge = (source.run()?.config ?? source.config())?.merging ?? { match: "text" as const, ignoreTools: true, overflow: "drop" as const };
    const tokenizer = tokenizers(source);
    const found = withRunDb(source, (db) => readEpisode(db, id, { merge, tokenizer }));
    if (found === null) throw new HttpError(404, "AJ_ERR_EPISODE_NOT_FOUND", `no episode '${id}' in run.db`);
    return found;
  });

  app.get("/v1/dashboard/failures", { config: { auth: "admin" } }, async () => ({ failures: withRunDb(source, (db) => latestFailures(db, 20)) ?? [] }));

  app.get("/metrics", { config: { auth: "client" } }, async (_request, reply) =>
    reply.type("text/plain; version=0.0.4; charset=utf-8").send(withRunDb(source, (db) => renderMetrics(source, db)) ?? renderMetrics(source, null)),
  );
}

/** Tokenizers by policy: the live run's, else built from the config (the embedded one costs nothing). */
function tokenizers(source: DashboardSource): (policy: string) => Tokenizer | null {
  const run = source.run();
  const config = run?.config ?? source.config();
  const built = new Map<string, Tokenizer | null>();
  return (policy) => {
    const live = run?.policies.get(policy)?.tokenizer;
    if (live) return live;
    if (!built.has(policy)) {
      const p = config?.policies[policy];
      built.set(policy, p ? createTokenizer(p.tokenizer) : null);
    }
    return built.get(policy) ?? null;
  };
}

/** The report's charts (one code path: `chartsFor` + `renderChartSvg`) from the run's metrics.jsonl. */
async function renderCharts(runDir: string, version: number): Promise<unknown> {
  let events: ReturnType<typeof readMetrics>["events"] = [];
  try {
    events = readMetrics(join(runDir, "metrics.jsonl")).events;
  } catch {
    events = [];
  }
  const out: Array<{ slug: string; title: string; points: number; svg: string }> = [];
  for (const [slug, chart] of Object.entries(chartsFor(events))) {
    if (chart.points.length === 0) continue;
    out.push({ slug, title: chart.title, points: chart.points.length, svg: await renderChartSvg(chart) });
  }
  return { version, charts: out };
}
