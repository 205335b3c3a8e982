import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { NoReplicaError } from "../../../server/engines/openai-tokens/errors.ts";
import { ADMIN_AUTH, buildTestServer, CLIENT_AUTH, claimSolver, postChat, testConfig } from "../helpers/build-test-server.ts";
import { scriptedEngine } from "../helpers/scripted-engine.ts";

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

async function server(): Promise<FastifyInstance> {
  const app = await buildTestServer({ main: scriptedEngine(["ok<|im_end|>"]) }, { config: testConfig({ server: { bodyLimitBytes: 4096 } }) });
  apps.push(app);
  return app;
}

/** Our error shape, with a code docs/errors.md lists. */
function expectError(res: { statusCode: number; json: () => unknown }, status: number, code: string): void {
  expect(res.statusCode).toBe(status);
  const body = res.json() as { error: Record<string, unknown> };
  expect(Object.keys(body)).toEqual(["error"]);
  expect(body.error).toMatchObject({ code, type: expect.any(String), message: expect.any(String) });
}

// Regression: errors fastify raised itself answered with fastify's codes (FST_ERR_CTP_INVALID_JSON_BODY), and the
// router's (a path parameter past maxParamLength) even in fastify's own shape ({ statusCode, code, error, message }).
describe("errors fastify raises answer in our shape, with our codes", () => {
  it("malformed JSON, an empty JSON body, a body past server.bodyLimitBytes, a too-long path parameter", async () => {
    const app = await server();
    const post = (payload: string, headers: Record<string, string> = {}) =>
      app.inject({ method: "POST", url: "/v1/episodes/claim", headers: { ...CLIENT_AUTH, "content-type": "application/json", ...headers }, payload });
    expectError(await post("{not json"), 400, "AJ_ERR_INVALID_REQUEST");
    expectError(await post(""), 400, "AJ_ERR_INVALID_REQUEST");
    expectError(await post(JSON.stringify({ pad: "x".repeat(8192) })), 413, "AJ_ERR_BODY_TOO_LARGE");
    expectError(await app.inject({ method: "GET", url: `/v1/episodes/${"e".repeat(150)}`, headers: ADMIN_AUTH }), 414, "AJ_ERR_INVALID_REQUEST");
  });

  // Regression: an engine with no replica up answered a chat call 500 AJ_ERR_INTERNAL "internal server error".
  it("a coded server error registered with a 5xx status keeps its status and code, in public words", async () => {
    const engine = scriptedEngine(["ok<|im_end|>"]);
    engine.generate = async () => {
      throw new NoReplicaError("no replica served version 0 after 1 tries; last: http://10.1.2.3:8000/v1/completions: fetch failed (ECONNREFUSED)");
    };
    const app = await buildTestServer({ main: engine });
    apps.push(app);
    const key = claimSolver(app);
    const res = await postChat(app, key, { model: "main", messages: [{ role: "user", content: "hi" }] });
    expectError(res, 503, "AJ_ERR_NO_REPLICA");
    expect(res.body).not.toContain("10.1.2.3");
    // streamed, the stream has begun: its error event carries the same code and words
    const streamed = await postChat(app, key, { model: "main", messages: [{ role: "user", content: "hi" }], stream: true });
    expect(streamed.body).toContain('"code":"AJ_ERR_NO_REPLICA"');
    expect(streamed.body).not.toContain("10.1.2.3");
  });
});
