import { createHash } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { beginEpisodeRoute } from "../../../server/episodes/begin-route.ts";
import { createKeySigner } from "../../../server/episodes/keys.ts";
import { ADMIN_AUTH, buildTestServer, CLIENT_AUTH, testConfig } from "../helpers/build-test-server.ts";
import { scriptedEngine } from "../helpers/scripted-engine.ts";

// Each attack from issue 17, answered with a 4xx and nothing recorded, ended or trained.

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

const AGENTS = { solver: { kind: "policy", target: "main" } } as const;

async function setup(config = testConfig()) {
  const engine = scriptedEngine(Array.from({ length: 50 }, () => "ok<|im_end|>"));
  const app = await buildTestServer({ main: engine }, { config });
  apps.push(app);
  const store = app.agentjet.store;
  store.register({ episodeId: "e1", taskId: "t1", env: "smoke", agents: { ...AGENTS } });
  const claim = store.claim({ episodeId: "e1" });
  if (claim.kind !== "claimed") throw new Error("no claim");
  const key = claim.keys.solver!;
  const chat = (authKey: string) =>
    app.inject({ method: "POST", url: "/v1/chat/completions", headers: { authorization: `Bearer ${authKey}` }, payload: { model: "main", messages: [{ role: "user", content: "hi" }] } });
  return { app, store, engine, key, chat };
}

/** Spellings of `key` that Node's lenient base64url decoder reads as the same bytes (or that add junk). */
function variants(key: string): string[] {
  const [body, sig] = key.slice("sk-aj-".length).split(".") as [string, string];
  const last = sig.at(-1)!;
  // The signature is 32 bytes: its 43rd character carries 2 unused bits; flipping one decodes to the same bytes.
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const sameBytes = alphabet[alphabet.indexOf(last) ^ 1]!;
  return [
    `${key}!`,
    `${key}!!junk`,
    `${key}=`,
    `${key}.`,
    `${key}.${sig}`,
    `sk-aj-${body}.${sig.slice(0, -1)}${sameBytes}`,
    `sk-aj-${body}.${sig.slice(0, 20)}*${sig.slice(20)}`,
    `sk-aj-${body}.${sig.slice(0, 20)} ${sig.slice(20)}`,
    `sk-aj-${body.slice(0, 10)}!${body.slice(10)}.${sig}`,
    `sk-aj-${body}==.${sig}`,
    `sk-aj-${body.replace(/-/g, "+").replace(/_/g, "/")}.${sig.replace(/-/g, "+").replace(/_/g, "/")}`,
  ].filter((v) => v !== key);
}

describe("attacks on episode keys", () => {
  it("malleable keys: every other spelling of a valid key is 401, nothing is recorded, and the real key still works", async () => {
    const { chat, key, store, engine } = await setup();
    const signer = createKeySigner("test-secret");
    for (const v of variants(key)) {
      expect(signer.verify(v).kind, v).toBe("invalid");
      const res = await chat(v);
      expect(res.statusCode, v).toBe(401);
    }
    expect(store.tracker.callsOf("e1")).toHaveLength(0);
    expect(engine.prompts).toHaveLength(0);
    expect((await chat(key)).statusCode).toBe(200);
  });

  it("variants never reach the verification cache: a thousand of them leave every one refused", async () => {
    const { store, key } = await setup();
    for (let i = 0; i < 1000; i++) expect(store.authorize(`${key}${"!".repeat(1 + (i % 7))}${i}`).kind).toBe("unauthorized");
    expect(store.authorize(`${key}!`).kind).toBe("unauthorized");
    expect(store.authorize(key).kind).toBe("ok");
  });

  it("forged and foreign keys: an edited payload or another server's secret is 401", async () => {
    const { chat, key, store } = await setup();
    const [body, sig] = key.slice("sk-aj-".length).split(".") as [string, string];
    const payload = JSON.parse(Buffer.from(body, "base64url").toString()) as Record<string, unknown>;
    const forged = `sk-aj-${Buffer.from(JSON.stringify({ ...payload, a: "judge" })).toString("base64url")}.${sig}`;
    const foreign = createKeySigner("another-server").sign({ episodeId: "e1", agentId: "solver", kind: "policy", target: "main", attempt: 1, exp: Date.now() + 60_000 });
    for (const k of [forged, foreign]) {
      const res = await chat(k);
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe("AJ_ERR_INVALID_API_KEY");
    }
    expect(store.tracker.callsOf("e1")).toHaveLength(0);
  });
});

describe("attacks on the control plane", () => {
  it("metadata flood: 30 registrations with 3 MB of metadata each are 413 and none is registered", async () => {
    const { app, store } = await setup();
    const before = store.list().length;
    const big = { blob: "x".repeat(3 * 1024 * 1024) };
    for (let i = 0; i < 30; i++) {
      const res = await app.inject({ method: "POST", url: "/v1/episodes", headers: CLIENT_AUTH, payload: { taskId: `t${i}`, env: "smoke", agents: AGENTS, metadata: big } });
      expect(res.statusCode).toBe(413);
      expect(res.json().error.code).toBe("AJ_ERR_METADATA_TOO_LARGE");
    }
    const end = await app.inject({ method: "POST", url: "/v1/episodes/e1/end", headers: CLIENT_AUTH, payload: { rewards: { solver: 1 }, metadata: big } });
    expect(end.statusCode).toBe(413);
    expect(store.list().length).toBe(before);
    expect(store.get("e1")?.state).toBe("claimed");
  });

  it("metadata flood through POST /v1/episodes/begin: 413 (and deep nesting 400), nothing begun", async () => {
    const app = await buildTestServer({ main: scriptedEngine(["ok<|im_end|>"]) });
    apps.push(app);
    await app.register(async (scope) => beginEpisodeRoute(scope, { store: app.agentjet.store, baseUrl: () => "http://127.0.0.1:1/v1", defaultPolicy: "main", admit: async () => true }));
    const begin = (metadata: unknown) => app.inject({ method: "POST", url: "/v1/episodes/begin", headers: CLIENT_AUTH, payload: { taskId: "t", metadata } as Record<string, unknown> });
    expect((await begin({ blob: "x".repeat(3 * 1024 * 1024) })).statusCode).toBe(413);
    expect((await begin(JSON.parse(`${'{"a":'.repeat(40)}1${"}".repeat(40)}`))).statusCode).toBe(400);
    expect(app.agentjet.store.list()).toHaveLength(0);
    expect((await begin({ small: 1 })).statusCode).toBe(201);
  });

  it("deeply nested metadata is 400, however deep", async () => {
    const { app, store } = await setup();
    for (const depth of [17, 100_000]) {
      const nested = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
      const res = await app.inject({
        method: "POST",
        url: "/v1/episodes",
        headers: { ...CLIENT_AUTH, "content-type": "application/json" },
        payload: `{"taskId":"t","env":"smoke","agents":{"solver":{"kind":"policy","target":"main"}},"metadata":${nested}}`,
      });
      expect(res.statusCode, `depth ${depth}`).toBe(400);
    }
    expect(store.list({ state: "registered" })).toHaveLength(0);
  });

  it("registered-but-unclaimed episodes are bounded: past server.maxRegisteredEpisodes a register is 429", async () => {
    const { app, store } = await setup(testConfig({ server: { maxRegisteredEpisodes: 3 } }));
    const register = (i: number) => app.inject({ method: "POST", url: "/v1/episodes", headers: CLIENT_AUTH, payload: { taskId: `t${i}`, env: "smoke", agents: AGENTS } });
    for (let i = 0; i < 3; i++) expect((await register(i)).statusCode).toBe(201);
    const over = await register(3);
    expect(over.statusCode).toBe(429);
    expect(over.json().error.code).toBe("AJ_ERR_TOO_MANY_REGISTERED");
    expect(store.list({ state: "registered" })).toHaveLength(3);
  });

  it("bodiless and form POSTs (what a web page can send) cannot claim, even with a token", async () => {
    const { app, store } = await setup();
    store.register({ episodeId: "e2", taskId: "t2", env: "smoke", agents: { ...AGENTS } });
    const tries = [
      { headers: { ...CLIENT_AUTH } },
      { headers: { ...CLIENT_AUTH, "content-type": "application/x-www-form-urlencoded" }, payload: "episodeId=e2" },
      { headers: { ...CLIENT_AUTH, "content-type": "text/plain" }, payload: '{"episodeId":"e2"}' },
      { headers: { ...CLIENT_AUTH, "content-type": "multipart/form-data; boundary=x" }, payload: "--x--" },
    ];
    for (const t of tries) {
      const res = await app.inject({ method: "POST", url: "/v1/episodes/claim", ...t });
      expect(res.statusCode).toBe(415);
      expect(res.json().error.code).toBe("AJ_ERR_CONTENT_TYPE");
    }
    expect(store.get("e2")?.state).toBe("registered");
  });

  it("cross-origin requests are 403 (no Authorization needed to see it), same-origin ones pass", async () => {
    const { app, store } = await setup();
    await app.inject({ method: "POST", url: "/v1/episodes", headers: CLIENT_AUTH, payload: { episodeId: "e2", taskId: "t2", env: "smoke", agents: AGENTS } });
    for (const origin of ["http://evil.example", "null", "http://localhost:9999", "file://"]) {
      const res = await app.inject({ method: "POST", url: "/v1/episodes/claim", headers: { ...CLIENT_AUTH, origin, host: "localhost:8700" }, payload: { episodeId: "e2" } });
      expect(res.statusCode, origin).toBe(403);
      expect(res.json().error.code).toBe("AJ_ERR_CROSS_ORIGIN");
    }
    expect(store.get("e2")?.state).toBe("registered");
    const same = await app.inject({ method: "POST", url: "/v1/episodes/claim", headers: { ...CLIENT_AUTH, origin: "http://localhost:8700", host: "localhost:8700" }, payload: { episodeId: "e2" } });
    expect(same.json().kind).toBe("claimed");
  });

  it("DNS rebinding: on a loopback connection, a Host that is not this server's is 403 on every route", async () => {
    const { app } = await setup(testConfig({ server: { allowedHosts: ["gpu-box.lan"] } }));
    for (const url of ["/v1/models", "/v1/server/status"]) {
      const res = await app.inject({ method: "GET", url, headers: { ...CLIENT_AUTH, host: "attacker.example:8700" } });
      expect(res.statusCode, url).toBe(403);
      expect(res.json().error.code).toBe("AJ_ERR_HOST_NOT_ALLOWED");
    }
    for (const host of ["localhost:8700", "127.0.0.1:8700", "[::1]:8700", "gpu-box.lan:8700", "GPU-BOX.lan"]) {
      expect((await app.inject({ method: "GET", url: "/v1/server/status", headers: { ...CLIENT_AUTH, host } })).statusCode, host).toBe(200);
    }
  });

  it("a client token cannot claim, end, abort or heart-beat the scheduler's episodes, nor another token's", async () => {
    const other = "other-client-token-0123456789";
    const two = await buildTestServer({ main: scriptedEngine(["ok<|im_end|>"]) }, { auth: { adminToken: ADMIN_AUTH.authorization.slice(7), clientTokens: [CLIENT_AUTH.authorization.slice(7), other] } });
    apps.push(two);
    const s = two.agentjet.store;
    // The scheduler's (in-process) episodes: one claimed by a swarm client, one waiting.
    s.register({ episodeId: "sched-1", taskId: "t", env: "smoke", agents: { ...AGENTS } });
    s.claim({ episodeId: "sched-1", clientId: "swarm-client" });
    s.register({ episodeId: "sched-2", taskId: "t", env: "smoke", agents: { ...AGENTS } });
    const as = (token: Record<string, string>, url: string, payload: Record<string, unknown>) => two.inject({ method: "POST", url, headers: token, payload });
    expect((await as(CLIENT_AUTH, "/v1/episodes/claim", {})).json()).toEqual({ kind: "empty" });
    expect((await as(CLIENT_AUTH, "/v1/episodes/claim", { episodeId: "sched-2" })).statusCode).toBe(403);
    for (const [url, body] of [["/v1/episodes/sched-1/end", { rewards: { solver: 1e6 } }], ["/v1/episodes/sched-1/abort", { reason: { kind: "crash", message: "x" } }], ["/v1/episodes/sched-1/heartbeat", {}], ["/v1/episodes/sched-2/abort", { reason: { kind: "crash", message: "x" } }]] as const) {
      const res = await as(CLIENT_AUTH, url, body);
      expect(res.statusCode, url).toBe(403);
      expect(res.json().error.code).toBe("AJ_ERR_EPISODE_NOT_YOURS");
    }
    expect([s.get("sched-1")?.state, s.get("sched-2")?.state]).toEqual(["claimed", "registered"]);
    // Another client's HTTP episode: registered and claimed by CLIENT_AUTH, so the other token is refused.
    await as(CLIENT_AUTH, "/v1/episodes", { episodeId: "mine", taskId: "t", env: "smoke", agents: AGENTS });
    expect((await as(CLIENT_AUTH, "/v1/episodes/claim", {})).json().episode.episodeId).toBe("mine");
    const otherAuth = { authorization: `Bearer ${other}` };
    expect((await as(otherAuth, "/v1/episodes/mine/end", { rewards: { solver: 1 } })).statusCode).toBe(403);
    expect(s.get("mine")?.state).toBe("claimed");
    expect((await as(CLIENT_AUTH, "/v1/episodes/mine/end", { rewards: { solver: 1 } })).json().episode.state).toBe("ended");
    // Begun (registered and claimed in-process for the caller, as POST /v1/episodes/begin does): the caller's alone.
    const identity = `token-${createHash("sha256").update(CLIENT_AUTH.authorization).digest("hex").slice(0, 12)}`;
    s.register({ episodeId: "begun", taskId: "t", env: "smoke", agents: { ...AGENTS } });
    s.claim({ episodeId: "begun", clientId: identity });
    expect((await as(otherAuth, "/v1/episodes/begun/end", { rewards: { solver: 1 } })).statusCode).toBe(403);
    expect((await as(CLIENT_AUTH, "/v1/episodes/begun/end", { rewards: { solver: 1 } })).statusCode).toBe(200);
  });

  it("a client token cannot read recorded data (403); the admin token can", async () => {
    const { app, chat, key } = await setup();
    await chat(key);
    for (const url of ["/v1/episodes/e1/calls", "/v1/episodes/e1", "/v1/episodes"]) {
      const res = await app.inject({ method: "GET", url, headers: CLIENT_AUTH });
      expect(res.statusCode, url).toBe(403);
      expect(JSON.stringify(res.json())).not.toContain("hi");
    }
    expect((await app.inject({ method: "GET", url: "/v1/episodes/e1/calls", headers: ADMIN_AUTH })).json().calls).toHaveLength(1);
  });

  it("end takes numbers only: strings, null and booleans are 400 and the episode stays open; 1e309 (Infinity in JSON) is refused by the reward rule (422, aborted as protocol)", async () => {
    const { app, store } = await setup();
    // The admin token: the episode was claimed in-process, so no client token may end it (403 before the reward rule).
    const end = (reward: string) =>
      app.inject({ method: "POST", url: "/v1/episodes/e1/end", headers: { ...ADMIN_AUTH, "content-type": "application/json" }, payload: `{"rewards":{"solver":${reward}}}` });
    for (const reward of ['"1"', "null", "true"]) expect((await end(reward)).statusCode, reward).toBe(400);
    expect(store.get("e1")?.state).toBe("claimed");
    const res = await end("1e309");
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe("AJ_ERR_EPISODE_REWARDS");
    expect(store.get("e1")).toMatchObject({ state: "aborted", abortReason: { kind: "protocol" } });
  });
});
