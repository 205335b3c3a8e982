import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestServer, postChat, testConfig } from "../helpers/build-test-server.ts";
import { scriptedEngine } from "../helpers/scripted-engine.ts";

/** A real OpenAI-compatible upstream on loopback that plays the frozen opponent. */
async function startUpstream(): Promise<{ app: FastifyInstance; url: string; bodies: Array<Record<string, unknown>>; auth: string[] }> {
  const bodies: Array<Record<string, unknown>> = [];
  const auth: string[] = [];
  const app = Fastify();
  app.post("/v1/chat/completions", async (request) => {
    bodies.push(request.body as Record<string, unknown>);
    auth.push(String(request.headers.authorization));
    return {
      id: "up-1",
      object: "chat.completion",
      created: 1,
      model: "big-model",
      choices: [{ index: 0, message: { role: "assistant", content: "I vote for player 3." }, finish_reason: "stop" }],
      usage: { prompt_tokens: 11, completion_tokens: 6, total_tokens: 17 },
    };
  });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  return { app, url, bodies, auth };
}

describe("frozen models", () => {
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let server: FastifyInstance;

  beforeAll(async () => {
    upstream = await startUpstream();
    const config = testConfig({
      frozen: { opponent: { baseUrl: `${upstream.url}/v1`, model: "big-model", apiKey: "up-key", temperature: 0.01 } },
    });
    server = await buildTestServer({ main: scriptedEngine(["mine<|im_end|>"]) }, { config });
  });

  afterAll(async () => {
    await server.close();
    await upstream.app.close();
  });

  it("forwards a frozen agent's call, overriding model and temperature, and records it untrainable", async () => {
    const store = server.agentjet.store;
    const ended: unknown[][] = [];
    store.on("ended", (_e, calls) => ended.push(calls));
    store.register({
      episodeId: "w1",
      taskId: "seed-1",
      env: "werewolves",
      agents: { wolf: { kind: "policy", target: "main" }, villager: { kind: "frozen", target: "opponent" } },
    });
    const claim = store.claim();
    if (claim.kind !== "claimed") throw new Error("no claim");
    const ask = (agent: string, stream = false) =>
      server.inject({
        method: "POST",
        url: "/v1/chat/completions",
        headers: { authorization: `Bearer ${claim.keys[agent]}` },
        payload: { model: "anything", messages: [{ role: "user", content: "Vote." }], temperature: 1, stream },
      });
    const res = await ask("villager");
    expect(res.statusCode).toBe(200);
    expect(res.json().choices[0].message.content).toBe("I vote for player 3.");
    expect(res.json().model).toBe("opponent");
    expect(upstream.bodies[0]).toMatchObject({ model: "big-model", temperature: 0.01, stream: false });
    expect(upstream.auth[0]).toBe("Bearer up-key");
    const streamed = await ask("villager", true);
    expect(streamed.body).toContain("I vote for player 3.");
    expect(streamed.body.trim().endsWith("data: [DONE]")).toBe(true);
    await ask("wolf");

    const calls = store.tracker.callsOf("w1");
    expect(calls.map((c) => [c.agentId, c.trainable, c.seq])).toEqual([["villager", false, 0], ["villager", false, 1], ["wolf", true, 0]]);
    store.end("w1", { rewards: { wolf: 1 } });
    expect(ended[0]!.map((c) => (c as { agentId: string }).agentId)).toEqual(["wolf"]);
  });

  it("answers 502 in OpenAI's shape when the upstream is unreachable", async () => {
    const config = testConfig({ frozen: { gone: { baseUrl: "http://127.0.0.1:9/v1", model: "x" } } });
    const app = await buildTestServer({ main: scriptedEngine([]) }, { config });
    app.agentjet.store.register({ episodeId: "g", taskId: "t", env: "e", agents: { a: { kind: "frozen", target: "gone" } } });
    const claim = app.agentjet.store.claim();
    if (claim.kind !== "claimed") throw new Error("no claim");
    const res = await postChat(app, claim.keys.a!, { model: "x", messages: [{ role: "user", content: "hi" }] });
    expect(res.statusCode).toBe(502);
    expect(res.json().error).toMatchObject({ code: "AJ_ERR_FROZEN_UPSTREAM", type: "server_error" });
    await app.close();
  });

  it("lists frozen models beside policies", async () => {
    const res = await server.inject({ method: "GET", url: "/v1/models" });
    expect(res.json().data.map((m: { id: string; owned_by: string }) => [m.id, m.owned_by])).toEqual([
      ["main", "agentjet-policy"],
      ["opponent", "agentjet-frozen"],
    ]);
  });
});
