import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { ADMIN_AUTH, buildTestServer, CLIENT_AUTH, postChat } from "../helpers/build-test-server.ts";
import { scriptedEngine } from "../helpers/scripted-engine.ts";

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

async function setup() {
  let clock = 1_000_000;
  const app = await buildTestServer(
    { main: scriptedEngine(["ok<|im_end|>"]) },
    { now: () => clock, rewardRanges: new Map([["smoke", { min: 0, max: 1 }]]) },
  );
  apps.push(app);
  // Running episodes takes a client token; reading them back, the admin token.
  const post = (url: string, payload: unknown = {}) => app.inject({ method: "POST", url, headers: CLIENT_AUTH, payload: payload as Record<string, unknown> });
  const get = (url: string) => app.inject({ method: "GET", url, headers: url === "/v1/server/status" ? CLIENT_AUTH : ADMIN_AUTH });
  return { app, post, get, tick: (ms: number) => (clock += ms) };
}

const REGISTER = { episodeId: "e1", taskId: "t1", env: "smoke", agents: { solver: { kind: "policy", target: "main" } } };

describe("episode routes", () => {
  it("register -> claim -> heartbeat -> end, with status along the way", async () => {
    const { post, get, app } = await setup();
    const reg = await post("/v1/episodes", REGISTER);
    expect(reg.statusCode).toBe(201);
    expect(reg.json().episode).toMatchObject({ episodeId: "e1", state: "registered" });
    expect((await post("/v1/episodes", REGISTER)).statusCode).toBe(409);
    const claim = (await post("/v1/episodes/claim", { clientId: "c1" })).json();
    expect(claim).toMatchObject({ kind: "claimed", episode: { state: "claimed", clientId: "c1", attempt: 1 } });
    expect(claim.keys.solver).toMatch(/^sk-aj-/);
    expect((await post("/v1/episodes/claim")).json()).toEqual({ kind: "empty" });
    expect((await post("/v1/episodes/e1/heartbeat")).json().episode.state).toBe("claimed");
    const chat = await postChat(app, claim.keys.solver, { messages: [{ role: "user", content: "hi" }] });
    expect(chat.statusCode).toBe(200);
    expect((await get("/v1/server/status")).json()).toEqual({ claimsPaused: false, inFlight: 1, registered: 0 });
    const end = await post("/v1/episodes/e1/end", { rewards: { solver: 0.5 }, metadata: { turns: 1 } });
    expect(end.json().episode).toMatchObject({ state: "ended", rewards: { solver: 0.5 }, metadata: { turns: 1 } });
    expect((await get("/v1/episodes/e1")).json().episode.state).toBe("ended");
    expect((await get("/v1/episodes/e1/calls")).json().calls).toHaveLength(1);
    // no longer live, but run.db has it: 409 with its state (a field for clients, the message for people), not "no episode"
    const again = await post("/v1/episodes/e1/end", { rewards: {} });
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toEqual({ message: "episode 'e1' is ended; cannot end", type: "conflict_error", code: "AJ_ERR_EPISODE_STATE", param: null, state: "ended" });
    expect((await post("/v1/episodes/e1/abort", { reason: { kind: "crash", message: "x" } })).json().error).toMatchObject({ message: "episode 'e1' is ended; cannot abort", state: "ended" });
    const beat = await post("/v1/episodes/e1/heartbeat");
    expect([beat.statusCode, beat.json().error.state]).toEqual([409, "ended"]);
    expect((await post("/v1/episodes/nope/end", { rewards: {} })).statusCode).toBe(404);
  });

  it("on a run.db file, each transition is answered once its row is committed, and an end or abort once the episode's calls are too (read by another connection)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aj-end-commit-"));
    try {
      const app = await buildTestServer({ main: scriptedEngine(["ok<|im_end|>"]) }, { dbPath: join(dir, "run.db") });
      apps.push(app);
      const reader = new Database(join(dir, "run.db"), { readonly: true });
      const count = (id: string) => (reader.prepare("SELECT COUNT(*) AS n FROM calls WHERE episode_id = ?").get(id) as { n: number }).n;
      const state = (id: string) => (reader.prepare("SELECT state FROM episodes WHERE episode_id = ?").get(id) as { state: string } | undefined)?.state;
      const post = (url: string, payload: unknown = {}) => app.inject({ method: "POST", url, headers: CLIENT_AUTH, payload: payload as Record<string, unknown> });
      for (const [id, action, body] of [
        ["e1", "end", { rewards: { solver: 1 } }],
        ["e2", "abort", { reason: { kind: "crash", message: "x" } }],
      ] as const) {
        expect((await post("/v1/episodes", { ...REGISTER, episodeId: id })).statusCode).toBe(201);
        expect(state(id)).toBe("registered");
        const { keys } = (await post("/v1/episodes/claim", { episodeId: id })).json();
        expect(state(id)).toBe("claimed");
        for (let i = 0; i < 2; i++) expect((await postChat(app, keys.solver, { messages: [{ role: "user", content: `hi ${i}` }] })).statusCode).toBe(200);
        // recorded calls wait for their batch
        expect(count(id)).toBe(0);
        expect((await post(`/v1/episodes/${id}/${action}`, body)).statusCode).toBe(200);
        expect(count(id)).toBe(2);
        expect(state(id)).toBe(action === "end" ? "ended" : "aborted");
      }
      reader.close();
    } finally {
      for (const a of apps.splice(0)) await a.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("on a run.db file that refuses the episode's calls, the end answers 500 with the failure's code, not a bare AJ_ERR_INTERNAL", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aj-end-fails-"));
    const app = await buildTestServer({ main: scriptedEngine(["ok<|im_end|>"]) }, { dbPath: join(dir, "run.db") });
    try {
      const post = (url: string, payload: unknown = {}) => app.inject({ method: "POST", url, headers: CLIENT_AUTH, payload: payload as Record<string, unknown> });
      expect((await post("/v1/episodes", REGISTER)).statusCode).toBe(201);
      const { keys } = (await post("/v1/episodes/claim", { episodeId: "e1" })).json();
      // a disk that fills up, as another process sees it: every insert into calls fails from now on
      const other = new Database(join(dir, "run.db"));
      other.exec("CREATE TRIGGER full BEFORE INSERT ON calls BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END");
      other.close();
      expect((await postChat(app, keys.solver, { messages: [{ role: "user", content: "hi" }] })).statusCode).toBe(200);
      const end = await post("/v1/episodes/e1/end", { rewards: { solver: 1 } });
      expect(end.statusCode).toBe(500);
      // the episode's row and its calls commit together: either failure may answer first
      expect(["AJ_ERR_RECORDING_FAILED", "AJ_ERR_EPISODE_STORAGE"]).toContain(end.json().error.code);
      expect(end.json().error.type).toBe("server_error");
      // the run.db path is not in the answer (the code's public meaning is)
      expect(end.body).not.toContain(dir);
      const again = await post("/v1/episodes/e1/end", { rewards: { solver: 1 } });
      expect({ status: again.statusCode, code: again.json().error.code, state: again.json().error.state }).toEqual({ status: 409, code: "AJ_ERR_EPISODE_STATE", state: "ended" });
    } finally {
      await app.close().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Regression (issue 18, item 3): the end route checked only the rewards' shape.
  it("end refuses out-of-range or missing rewards with 422 and aborts the episode as protocol", async () => {
    const { post, get } = await setup();
    for (const [id, rewards] of [["e1", { solver: 1e6 }], ["e2", {}]] as const) {
      await post("/v1/episodes", { ...REGISTER, episodeId: id });
      await post("/v1/episodes/claim", { episodeId: id });
      const end = await post(`/v1/episodes/${id}/end`, { rewards });
      expect(end.statusCode).toBe(422);
      expect(end.json().error).toMatchObject({ code: "AJ_ERR_EPISODE_REWARDS", param: "rewards" });
      expect((await get(`/v1/episodes/${id}`)).json().episode).toMatchObject({ state: "aborted", abortReason: { kind: "protocol" } });
    }
  });

  it("abort with a reason; refused transitions are 409, unknown episodes 404, bad bodies 400", async () => {
    const { post, get } = await setup();
    await post("/v1/episodes", REGISTER);
    const early = await post("/v1/episodes/e1/end", { rewards: {} });
    expect([early.statusCode, early.json().error.code, early.json().error.state]).toEqual([409, "AJ_ERR_EPISODE_STATE", "registered"]);
    expect((await post("/v1/episodes/e1/abort", { reason: "x" })).json().error.param).toBe("reason");
    const abort = await post("/v1/episodes/e1/abort", { reason: { kind: "sandbox_crash", message: "oom" } });
    expect(abort.json().episode).toMatchObject({ state: "aborted", abortReason: { kind: "sandbox_crash", message: "oom" } });
    expect((await post("/v1/episodes/e1/heartbeat")).json().error).toMatchObject({ code: "AJ_ERR_EPISODE_STATE", state: "aborted" });
    const unknown = await post("/v1/episodes/nope/heartbeat");
    expect([unknown.statusCode, "state" in unknown.json().error]).toEqual([404, false]);
    expect((await get("/v1/episodes/nope")).statusCode).toBe(404);
    const badBinding = await post("/v1/episodes", { ...REGISTER, episodeId: "e2", agents: { a: { kind: "policy", target: "ghost" } } });
    expect(badBinding.statusCode).toBe(400);
    expect(badBinding.json().error.code).toBe("AJ_ERR_EPISODE_BINDING");
  });

  it("reports a paused claims gate and lists episodes by state", async () => {
    const { post, get, app } = await setup();
    await post("/v1/episodes", REGISTER);
    app.agentjet.store.pauseClaims();
    expect((await post("/v1/episodes/claim")).json()).toEqual({ kind: "paused" });
    expect((await get("/v1/episodes?state=registered")).json().episodes.map((e: { episodeId: string }) => e.episodeId)).toEqual(["e1"]);
    expect((await get("/v1/episodes?state=claimed")).json().episodes).toEqual([]);
  });

  it("needs a token: none or a wrong one is 401, a client token on an admin route 403", async () => {
    const { app } = await setup();
    const none = await app.inject({ method: "POST", url: "/v1/episodes", payload: REGISTER });
    expect(none.statusCode).toBe(401);
    expect(none.json().error.code).toBe("AJ_ERR_AUTH_MISSING");
    const wrong = await app.inject({ method: "POST", url: "/v1/episodes", headers: { authorization: "Bearer not-a-token" }, payload: REGISTER });
    expect(wrong.json().error.code).toBe("AJ_ERR_AUTH_INVALID");
    expect((await app.inject({ method: "POST", url: "/v1/episodes", headers: ADMIN_AUTH, payload: REGISTER })).statusCode).toBe(201);
    const forbidden = await app.inject({ method: "GET", url: "/v1/episodes/e1", headers: CLIENT_AUTH });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().error.code).toBe("AJ_ERR_AUTH_FORBIDDEN");
    expect((await app.inject({ method: "GET", url: "/v1/models" })).statusCode).toBe(200);
  });
});
