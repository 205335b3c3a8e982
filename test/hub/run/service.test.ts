import { mkdirSync, readFileSync } from "node:fs";
import { request } from "node:http";
import { Writable } from "node:stream";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { TrainingService } from "../../../hub/run/service.ts";
import { createZeroLatencyEngine } from "../../doubles/zero-latency-engine.ts";
import { seedRunDb } from "../../helpers/seed-run-db.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";
import { call, smallConfig, waitFor } from "./helpers.ts";

afterAll(removeTempDirs);
const open: TrainingService[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function offlineService() {
  const project = tempDir("svc");
  const service = await TrainingService.listen({ host: "127.0.0.1", port: 0, projectDir: project, runDir: join(project, "run"), log: () => undefined });
  open.push(service);
  const { adminToken, clientTokens } = service.tokens();
  return { service, project, url: service.origin(), admin: adminToken, client: clientTokens[0]! };
}

/** One client-driven episode: begin, one chat call with its key, end with a reward. */
async function playClientDriven(url: string, token: string, taskId: string, reward: number, groupId?: string) {
  const begun = await call(`${url}/v1/episodes/begin`, "POST", { taskId, env: "raw", ...(groupId ? { groupId } : {}) }, token);
  expect(begun.status).toBe(201);
  expect(begun.json.baseUrl).toBe(`${url}/v1`);
  const key: string = begun.json.keys.main;
  const res = await fetch(`${begun.json.baseUrl}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "main", messages: [{ role: "user", content: `${taskId}=` }] }),
  });
  expect(res.status).toBe(200);
  const ended = await call(`${url}/v1/episodes/${begun.json.episode.episodeId}/end`, "POST", { rewards: { main: reward } }, token);
  expect(ended.status).toBe(200);
  return begun.json.episode.episodeId as string;
}

/** Configures `service` (reached at `url`) with a one-step config, starts it and begins a client-driven episode of task 1+1. */
async function startWithEpisode(service: TrainingService, url: string) {
  const { adminToken, clientTokens } = service.tokens();
  expect((await call(`${url}/v1/engine/config`, "POST", { config: await smallConfig("tasks", 1) }, adminToken)).status).toBe(200);
  expect((await call(`${url}/v1/engine/start`, "POST", {}, adminToken)).status).toBe(200);
  const begun = await call(`${url}/v1/episodes/begin`, "POST", { taskId: "1+1", env: "raw" }, clientTokens[0]);
  return { begun, client: clientTokens[0]! };
}

/** A request with its own `Host` header (fetch sets it from the URL). */
function requestAs(host: string, url: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: body === undefined ? "GET" : "POST", headers: { ...headers, host } }, (res) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("TrainingService (agentjet serve)", () => {
  it("starts offline, answers 503 for run routes, refuses a bad config and a start without one", async () => {
    const { url, admin, client } = await offlineService();
    expect((await call(`${url}/v1/engine/status`, "GET")).status).toBe(401);
    expect((await call(`${url}/v1/engine/start`, "POST", {}, client)).status).toBe(403);
    const status = await call(`${url}/v1/engine/status`, "GET", undefined, client);
    expect(status.json).toMatchObject({ state: "offline", configured: false, step: 0, versions: {} });
    const models = await call(`${url}/v1/models`, "GET");
    expect(models.status).toBe(503);
    expect(models.json.error.code).toBe("AJ_ERR_ENGINE_OFFLINE");
    expect((await call(`${url}/v1/engine/start`, "POST", {}, admin)).json.error.code).toBe("AJ_ERR_ENGINE_NOT_CONFIGURED");
    const bad = await call(`${url}/v1/engine/config`, "POST", { config: { policies: {} } }, admin);
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe("AJ_ERR_INVALID_CONFIG");
  });

  it("is configured and started by a client, trains on client-driven episodes, stops, and restarts from its checkpoint", { timeout: 240_000 }, async () => {
    const { service, url, project, admin, client } = await offlineService();
    const config = await smallConfig("tasks", 1);
    config.batching.groupSize = 2;
    expect((await call(`${url}/v1/engine/config`, "POST", { config }, admin)).json).toMatchObject({ state: "offline", configured: true });
    const started = await call(`${url}/v1/engine/start`, "POST", {}, admin);
    expect(started.status).toBe(200);
    expect(started.json).toMatchObject({ state: "rolling", versions: { main: 0 }, starts: 1 });
    expect((await call(`${url}/v1/models`, "GET")).status).toBe(200);
    // refused while it runs, with the state as a field (not only in the message)
    const again = await call(`${url}/v1/engine/start`, "POST", {}, admin);
    expect([again.status, again.json.error.code, again.json.error.state]).toEqual([409, "AJ_ERR_ENGINE_STATE", "rolling"]);
    expect((await call(`${url}/v1/engine/config`, "POST", { config }, admin)).json.error).toMatchObject({ code: "AJ_ERR_ENGINE_STATE", state: "rolling" });

    // Two tasks, two episodes each (groupSize 2), unequal rewards: one `tasks` batch. Grouped by caller.
    for (const [task, rewards] of [["7+1", [0, 1]], ["2+2", [1, 0]]] as const) {
      for (const r of rewards) await playClientDriven(url, client, task, r);
    }
    const result = await service.whenEnded();
    expect(result).toMatchObject({ reason: "done", versions: { main: 1 } });
    const after = await call(`${url}/v1/engine/status`, "GET", undefined, client);
    expect(after.json).toMatchObject({ state: "offline", lastRun: { reason: "done", step: 1 } });
    // The run counts them as it counts the scheduler's (it reported perEnv {}, 0 episodes/s, and no episode-end events)
    const events = readFileSync(join(project, "run", "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, any>);
    expect(events.filter((e) => e.type === "episode-end" && e.env === "raw").map((e) => e.reward).sort()).toEqual([0, 0, 1, 1]);
    expect(events.find((e) => e.type === "step")!.perEnv.raw).toMatchObject({ episodes: 4, meanReward: 0.5 });

    // Start again with more steps: it continues from the final checkpoint (weights at version 1).
    const more = { ...config, run: { ...config.run, steps: 3 } };
    expect((await call(`${url}/v1/engine/config`, "POST", { config: more }, admin)).status).toBe(200);
    expect((await call(`${url}/v1/engine/start`, "POST", {}, admin)).json).toMatchObject({ state: "rolling", versions: { main: 1 }, starts: 2 });
    await playClientDriven(url, client, "1+1", 1);
    const stopped = await call(`${url}/v1/engine/stop`, "POST", {}, admin);
    expect(stopped.json).toMatchObject({ state: "offline", stopped: true, lastRun: { reason: "interrupted" } });
    expect((await call(`${url}/v1/episodes/begin`, "POST", { taskId: "x" }, client)).json.error.code).toBe("AJ_ERR_ENGINE_OFFLINE");

    // the restart continued with another config than the run saved: said, naming what changed
    expect(readFileSync(join(project, "run", "metrics.jsonl"), "utf8")).toContain("differs from the one the run saved (config.yaml) in run.steps: the run continues with this one");

    const db = new Database(join(project, "run", "run.db"), { readonly: true });
    try {
      const rows = db.prepare("SELECT state, metadata FROM episodes").all() as Array<{ state: string; metadata: string }>;
      expect(rows.filter((r) => r.state === "ended")).toHaveLength(5);
      expect(JSON.parse(rows[0]!.metadata)).toMatchObject({ groupId: expect.stringMatching(/^caller:/) });
    } finally {
      db.close();
    }
  });

  // A serve killed (SIGKILL, power loss) before its run's first checkpoint left run.db and no step: the
  // restarted serve refused to start and told the user to pass --resume, an option serve does not have.
  it("plays again from step 0 a run directory whose run was killed before its first checkpoint, aborting its open episodes", { timeout: 120_000 }, async () => {
    const project = tempDir("svc-killed");
    const runDir = join(project, "run");
    mkdirSync(runDir);
    seedRunDb(join(runDir, "run.db"), { episodes: 3, claimed: 2, envs: ["raw"] });
    const service = await TrainingService.listen({ host: "127.0.0.1", port: 0, projectDir: project, runDir, log: () => undefined });
    open.push(service);
    const url = service.origin();
    const { adminToken, clientTokens } = service.tokens();
    expect((await call(`${url}/v1/engine/config`, "POST", { config: await smallConfig("tasks", 1) }, adminToken)).status).toBe(200);
    const started = await call(`${url}/v1/engine/start`, "POST", {}, adminToken);
    expect([started.status, started.json.state, started.json.versions]).toEqual([200, "rolling", { main: 0 }]);
    await playClientDriven(url, clientTokens[0]!, "7+1", 1);

    const db = new Database(join(runDir, "run.db"), { readonly: true });
    try {
      const rows = db.prepare("SELECT episode_id, state, abort_reason FROM episodes ORDER BY created_at").all() as Array<{ episode_id: string; state: string; abort_reason: string | null }>;
      expect(rows.slice(0, 3).map((r) => [r.state, r.abort_reason && JSON.parse(r.abort_reason).kind])).toEqual([["ended", null], ["aborted", "server-restart"], ["aborted", "server-restart"]]);
      expect(rows.slice(3).map((r) => r.state)).toEqual(["ended"]);
    } finally {
      db.close();
    }
    const events = readFileSync(join(runDir, "metrics.jsonl"), "utf8");
    expect(events).toContain("the run stopped before its first checkpoint: starting it again from step 0");
  });

  // The run's fastify app logs nothing under the service (the service writes the access lines it forwards):
  // a 5xx of a run route answered "internal server error" and its cause was logged nowhere.
  it("logs a failed request of the run (a 5xx), raw chat route and fastify route alike, with its cause in the service's log", { timeout: 120_000 }, async () => {
    const project = tempDir("svc-5xx");
    const logs: Array<{ level: string; message: string; fields?: Record<string, unknown> }> = [];
    let explode = false;
    const engine = createZeroLatencyEngine({
      respond: () => {
        if (explode) throw new Error("the engine exploded");
        return [];
      },
    });
    const service = await TrainingService.listen({
      host: "127.0.0.1",
      port: 0,
      projectDir: project,
      runDir: join(project, "run"),
      log: (level, message, fields) => void logs.push({ level, message, ...(fields ? { fields } : {}) }),
      run: { engines: { main: engine } },
    });
    open.push(service);
    const url = service.origin();
    const { begun, client } = await startWithEpisode(service, url);
    // a client-driven episode counts as in flight (a weight update waits for it): status said 0
    expect((await call(`${url}/v1/engine/status`, "GET", undefined, client)).json.inFlight).toBe(1);
    explode = true;
    for (const [path, body] of [["/v1/chat/completions", { messages: [{ role: "user", content: "1+1=" }] }], ["/v1/completions", { prompt: "1+1=" }]] as const) {
      const before = logs.filter((l) => l.level === "error").length;
      const res = await call(`${url}${path}`, "POST", { model: "main", ...body }, begun.json.keys.main as string);
      expect([path, res.status, res.json.error.code]).toEqual([path, 500, "AJ_ERR_INTERNAL"]);
      const errors = logs.filter((l) => l.level === "error").slice(before);
      expect(errors.map((l) => [l.message, (l.fields?.err as Error | undefined)?.message])).toEqual([["request failed", "the engine exploded"]]);
    }
  });

  // `agentjet serve --host 0.0.0.0` without --public-url (docs/deploy.md) gives agents this machine's name,
  // which Debian resolves to 127.0.1.1: an agent on the same machine then reached the server on a loopback
  // connection with that name in Host, and every call was refused 403 AJ_ERR_HOST_NOT_ALLOWED.
  it("accepts the host name it gives out as its own on loopback connections, on its routes and the run's", { timeout: 120_000 }, async () => {
    const project = tempDir("svc-host");
    const publicUrl = "http://gpu-box.test:8700";
    const service = await TrainingService.listen({ host: "127.0.0.1", port: 0, projectDir: project, runDir: join(project, "run"), publicUrl, log: () => undefined });
    open.push(service);
    const url = service.localOrigin();
    const status = { authorization: `Bearer ${service.tokens().clientTokens[0]!}` };
    expect((await requestAs("gpu-box.test:8700", `${url}/v1/engine/status`, status)).status).toBe(200);
    const other = await requestAs("other.test:8700", `${url}/v1/engine/status`, status);
    expect(other.status).toBe(403);
    expect(JSON.parse(other.body).error.code).toBe("AJ_ERR_HOST_NOT_ALLOWED");

    const { begun } = await startWithEpisode(service, url);
    expect(begun.json.baseUrl).toBe(`${publicUrl}/v1`);
    const chat = await requestAs(
      "gpu-box.test:8700",
      `${url}/v1/chat/completions`,
      { authorization: `Bearer ${begun.json.keys.main as string}`, "content-type": "application/json" },
      JSON.stringify({ model: "main", messages: [{ role: "user", content: "1+1=" }] }),
    );
    expect(chat.status, chat.body).toBe(200);
  });

  // A chat call is served at the service's HTTP server by the run's raw chat route (server/app/raw-chat-route.ts),
  // past both fastify apps; the service still writes the access lines its fastify wrote for every call it forwarded.
  it("serves chat calls ahead of both fastify apps, with the service's access log, and leaves them to fastify once stopped", { timeout: 120_000 }, async () => {
    const project = tempDir("svc-raw");
    const lines: Array<Record<string, any>> = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split("\n")) if (l.trim()) lines.push(JSON.parse(l) as Record<string, any>);
        done();
      },
    });
    const service = await TrainingService.listen({ host: "127.0.0.1", port: 0, projectDir: project, runDir: join(project, "run"), logger: { level: "info", stream }, log: () => undefined });
    open.push(service);
    const url = service.origin();
    const { begun } = await startWithEpisode(service, url);
    const chat = () =>
      fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${begun.json.keys.main as string}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "main", messages: [{ role: "user", content: "1+1=" }] }),
      });
    expect((await chat()).status).toBe(200);
    await waitFor(() => lines.some((l) => l.msg === "request completed" && String(l.reqId).startsWith("chat-")));
    const mine = lines.filter((l) => String(l.reqId).startsWith("chat-"));
    expect(mine.map((l) => l.msg)).toEqual(["incoming request", "request completed"]);
    expect(mine[0]!.req).toMatchObject({ method: "POST", url: "/v1/chat/completions" });
    expect(mine[1]!.res).toEqual({ statusCode: 200 });
    // fastify's own lines are for the control-plane calls only
    expect(lines.filter((l) => l.msg === "incoming request" && l.req?.url === "/v1/chat/completions")).toHaveLength(1);

    expect((await call(`${url}/v1/engine/stop`, "POST", {}, service.tokens().adminToken)).status).toBe(200);
    const offline = await chat();
    expect([offline.status, ((await offline.json()) as { error: { code: string } }).error.code]).toEqual([503, "AJ_ERR_ENGINE_OFFLINE"]);
  });
});
