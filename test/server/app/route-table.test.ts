import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Scheduler } from "../../../hub/scheduler/index.ts";
import { swarmPlugin } from "../../../hub/swarm/index.ts";
import { ADMIN_AUTH, buildTestServer, CLIENT_AUTH } from "../helpers/build-test-server.ts";
import { scriptedEngine } from "../helpers/scripted-engine.ts";
import { OPEN_ROUTES, fillParams as fill } from "../helpers/open-routes.ts";

const TEST_BASIC = Buffer.from("user:pass").toString("base64");

describe("the route table", () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await buildTestServer({ main: scriptedEngine(["ok<|im_end|>"]) });
    // The scheduler is never reached: every request below stops at the auth hook.
    await app.register(swarmPlugin, { scheduler: {} as Scheduler });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
  });

  it("declares auth on every route and opens only the OpenAI ones", () => {
    const routes = app.agentjet.routes;
    expect(routes.some((r) => r.url === "/swarm" && r.auth === "client")).toBe(true);
    expect(routes.some((r) => r.url === "/v1/episodes/:id/calls" && r.auth === "admin")).toBe(true);
    expect(routes.filter((r) => r.auth === "public" || r.auth === "episode-key").map((r) => `${r.method} ${r.url} ${r.auth}`).sort()).toEqual(OPEN_ROUTES.sort());
  });

  it("every other route refuses a missing and a wrong token, and admin routes a client token, before its handler runs", async () => {
    const guarded = app.agentjet.routes.filter((r) => r.auth === "client" || r.auth === "admin");
    expect(guarded.length).toBeGreaterThanOrEqual(10);
    const failures: string[] = [];
    const registered = app.agentjet.store.list().length;
    for (const r of guarded) {
      const method = r.method as "GET" | "POST" | "HEAD" | "PUT" | "DELETE" | "PATCH";
      const payload = method === "GET" || method === "HEAD" ? {} : { payload: { taskId: "t", env: "smoke", agents: { a: { kind: "policy", target: "main" } }, rewards: { a: 1 } } };
      const tries: Array<[string, Record<string, string>, number]> = [
        ["no token", {}, 401],
        ["a wrong token", { authorization: "Bearer wrong-token-0123456789" }, 401],
        ["a malformed header", { authorization: `Basic ${TEST_BASIC}` }, 401],
      ];
      if (r.auth === "admin") tries.push(["a client token", CLIENT_AUTH, 403]);
      for (const [what, headers, status] of tries) {
        const res = await app.inject({ method, url: fill(r.url), headers, ...payload });
        if (res.statusCode !== status) failures.push(`${r.method} ${r.url} with ${what}: ${res.statusCode}, expected ${status}`);
      }
    }
    expect(failures).toEqual([]);
    expect(app.agentjet.store.list().length).toBe(registered);
  });

  it("the episode-key routes refuse a request with no key before reading its body: a huge one is 401, not 413", async () => {
    // past the body limit (4 MB by default)
    const huge = JSON.stringify({ model: "main", messages: [{ role: "user", content: "x".repeat(5 << 20) }] });
    const keyed = app.agentjet.routes.filter((r) => r.auth === "episode-key");
    expect(keyed.length).toBeGreaterThanOrEqual(4);
    for (const r of keyed) {
      const method = r.method as "GET" | "HEAD" | "POST";
      const res = await app.inject({ method, url: fill(r.url), headers: { "content-type": "application/json" }, ...(method === "POST" ? { payload: huge } : {}) });
      // a HEAD answer has no body
      const code = method === "HEAD" ? "AJ_ERR_INVALID_API_KEY" : res.json().error.code;
      expect({ route: `${r.method} ${r.url}`, status: res.statusCode, code }).toEqual({ route: `${r.method} ${r.url}`, status: 401, code: "AJ_ERR_INVALID_API_KEY" });
    }
    const withKey = await app.inject({ method: "POST", url: "/v1/chat/completions", headers: { "content-type": "application/json", authorization: "Bearer sk-aj-x" }, payload: huge });
    expect(withKey.statusCode).toBe(413);
  });

  it("refuses at start-up a route that declares no auth", async () => {
    const other = await buildTestServer({ main: scriptedEngine(["ok<|im_end|>"]) });
    try {
      await expect(other.register(async (scope) => void scope.get("/v1/sneaky", async () => ({})))).rejects.toMatchObject({ code: "AJ_ERR_ROUTE_AUTH_MISSING" });
    } finally {
      await other.close().catch(() => undefined);
    }
  });

  it("the admin token works wherever a client token does", async () => {
    const res = await app.inject({ method: "GET", url: "/v1/server/status", headers: ADMIN_AUTH });
    expect(res.statusCode).toBe(200);
  });
});

