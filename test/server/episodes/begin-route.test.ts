import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { beginEpisodeRoute } from "../../../server/episodes/begin-route.ts";
import { buildTestServer, CLIENT_AUTH } from "../helpers/build-test-server.ts";
import { scriptedEngine } from "../helpers/scripted-engine.ts";

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

async function setup(admit: (store: FastifyInstance["agentjet"]["store"]) => Promise<boolean>) {
  const app = await buildTestServer({ main: scriptedEngine(["ok<|im_end|>"]) });
  apps.push(app);
  const store = app.agentjet.store;
  let admissions = 0;
  await app.register(async (scope) =>
    beginEpisodeRoute(scope, {
      store,
      baseUrl: () => "http://127.0.0.1:1/v1",
      defaultPolicy: "main",
      admit: () => {
        admissions += 1;
        return admit(store);
      },
    }),
  );
  const begin = () => app.inject({ method: "POST", url: "/v1/episodes/begin", headers: CLIENT_AUTH, payload: { taskId: "t" } });
  return { store, begin, admissions: () => admissions };
}

describe("POST /v1/episodes/begin", () => {
  it("claims paused between the admission and the claim (a batch completed meanwhile) wait for the sync, not a 503", async () => {
    let first = true;
    const { store, begin, admissions } = await setup(async (s) => {
      if (first) {
        // admitted, and before the handler goes on a weight sync pauses claims
        first = false;
        queueMicrotask(() => s.pauseClaims());
        setTimeout(() => s.resumeClaims(), 30);
        return true;
      }
      while (s.claimsPaused()) await new Promise((r) => setTimeout(r, 5));
      return true;
    });
    const res = await begin();
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().keys.main).toMatch(/^sk-aj-/);
    expect(admissions()).toBe(2);
    // nothing begun and aborted on the way
    expect(store.list().map((e) => e.state)).toEqual(["claimed"]);
  });

  it("answers 503 AJ_ERR_ENGINE_BUSY when the admission times out, with nothing begun", async () => {
    const { store, begin } = await setup(async () => false);
    const res = await begin();
    expect([res.statusCode, res.json().error.code]).toEqual([503, "AJ_ERR_ENGINE_BUSY"]);
    expect(store.list()).toHaveLength(0);
  });
});
