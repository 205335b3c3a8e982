import type { AddressInfo } from "node:net";
import websocket from "@fastify/websocket";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { registryFromEpisodeStore } from "../../hub/scheduler/index.ts";
import { buildServer } from "../../server/app/build-server.ts";
import { RunConfigSchema } from "../../server/config/run-config.ts";
import { type ClientEnvironment, type ClientEvent, SwarmClient } from "../../sdk/swarm/client.ts";
import { type AttachedSwarm, attachSwarm } from "./fixtures/attach-swarm.ts";
import { openFixtureEnv } from "./fixtures/fixture-envs.ts";
import { createScriptedPolicyEngine } from "./fixtures/real-swarm.ts";
import { schedulerEnv, waitFor } from "./fixtures/scripted-swarm.ts";
import { spawnClient, stopChild } from "./fixtures/spawn-client.ts";

const TOKENS = { adminToken: "admin-token-0123456789", clientTokens: ["alice-token-0123456789", "mallory-token-0123456789"] };
const [ALICE, MALLORY] = TOKENS.clientTokens as [string, string];

let countUp: ClientEnvironment;
let swarm: AttachedSwarm;
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  countUp = await openFixtureEnv("count-up");
  const config = RunConfigSchema.parse({
    policies: { policy: { tokenizer: "embedded" } },
    environments: [{ name: "count-up", roles: { solver: "policy" } }],
    sampling: { temperature: 0, maxTokens: 8 },
  });
  const app = await buildServer({ config, dbPath: ":memory:", keySecret: "swarm-auth", reclaimTimer: false, auth: TOKENS, engines: { policy: createScriptedPolicyEngine(0) } });
  swarm = await attachSwarm(app, [countUp.runtime], registryFromEpisodeStore(app.agentjet.store), {
    environments: [schedulerEnv(countUp.runtime)],
    leaseMs: 60_000,
    heartbeatMs: 1000,
  });
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});
afterAll(async () => {
  await swarm?.close();
  await countUp?.runtime.close();
});

function client(url: string, options: { token?: string; clientId?: string } = {}) {
  const events: ClientEvent[] = [];
  const c = new SwarmClient({ url, environments: [countUp], concurrency: 1, backoff: { initialMs: 20, maxMs: 50 }, onEvent: (e) => events.push(e), ...options });
  closers.push(() => c.stop());
  return { c, events };
}

/** A raw socket that says hello and resolves with the first frame it gets back and how the socket closed. */
function rawHello(url: string, token: string, hello: Record<string, unknown>): Promise<{ frame: Record<string, unknown>; closed: Promise<number> }> {
  const ws = new WebSocket(`${url.replace("http", "ws")}/swarm`, { headers: { authorization: `Bearer ${token}` } });
  closers.push(async () => ws.terminate());
  const closed = new Promise<number>((r) => ws.once("close", (code) => r(code)));
  return new Promise((resolve, reject) => {
    ws.once("error", reject);
    ws.once("open", () => ws.send(JSON.stringify({ type: "hello", protocol: 1, envs: [], concurrency: 1, running: [], ...hello })));
    ws.once("message", (data) => resolve({ frame: JSON.parse(data.toString()) as Record<string, unknown>, closed }));
  });
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: "127.0.0.1", port: 0 });
  closers.push(() => app.close());
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

describe("/swarm needs a client token and says why it refuses", () => {
  it("no token or a wrong one: start() rejects with the reason, once, with no retries", async () => {
    for (const token of [undefined, "wrong-token-0123456789"]) {
      const { c, events } = client(swarm.url, token === undefined ? {} : { token });
      await expect(c.start()).rejects.toMatchObject({ code: "AJ_ERR_CLIENT_UNAUTHORIZED" });
      expect(events.filter((e) => e.type === "fatal")).toHaveLength(1);
      expect(events.some((e) => e.type === "disconnected" || e.type === "connected")).toBe(false);
    }
    expect(swarm.events.some((e) => e.type === "client")).toBe(false);
  });

  it("a server without /swarm: 'no /swarm route at <url>: is this an agentjet serve/train?'", async () => {
    const config = RunConfigSchema.parse({ policies: { policy: { tokenizer: "embedded" } }, environments: [{ name: "count-up", roles: { solver: "policy" } }] });
    const url = await listen(await buildServer({ config, dbPath: ":memory:", reclaimTimer: false, auth: TOKENS, engines: { policy: createScriptedPolicyEngine(0) } }));
    const { c } = client(url, { token: ALICE });
    await expect(c.start()).rejects.toMatchObject({ code: "AJ_ERR_CLIENT_NO_SWARM", message: `no /swarm route at ${url}: is this an agentjet serve/train?` });
  });

  it("another protocol version: the server answers with its own code and the client stops", async () => {
    const { frame, closed } = await rawHello(swarm.url, ALICE, { protocol: 99, clientId: "future" });
    expect(frame).toMatchObject({ type: "error", code: "AJ_ERR_SWARM_PROTOCOL_VERSION" });
    expect(await closed).toBe(1008);
    // The client side, against a server that answers hello that way.
    const fake = Fastify();
    await fake.register(websocket);
    fake.get("/swarm", { websocket: true }, (socket) => {
      socket.on("message", () => {
        socket.send(JSON.stringify({ type: "error", code: "AJ_ERR_SWARM_PROTOCOL_VERSION", message: "this server speaks swarm protocol 2" }));
        socket.close(1008, "AJ_ERR_SWARM_PROTOCOL_VERSION");
      });
    });
    const { c, events } = client(await listen(fake), { token: ALICE });
    await expect(c.start()).rejects.toMatchObject({ code: "AJ_ERR_SWARM_PROTOCOL_VERSION" });
    await new Promise((r) => setTimeout(r, 200));
    expect(events.filter((e) => e.type === "disconnected")).toHaveLength(0);
  });

  it("an unreachable server is retried, with the reason", async () => {
    const fake = Fastify();
    const url = await listen(fake);
    await fake.close();
    const { c, events } = client(url, { token: ALICE });
    void c.start().catch(() => undefined);
    await waitFor(() => events.filter((e) => e.type === "disconnected").length >= 2, 10_000, "two retries");
    expect(events.find((e) => e.type === "disconnected")).toMatchObject({ reason: "ECONNREFUSED" });
  });

  it("clientId takeover: another token cannot take a connected client's id (the victim's socket stays open); its own token can", async () => {
    const { c: victim, events } = client(swarm.url, { token: ALICE, clientId: "victim" });
    await victim.start();
    const { frame, closed } = await rawHello(swarm.url, MALLORY, { clientId: "victim" });
    expect(frame).toMatchObject({ type: "error", code: "AJ_ERR_SWARM_CLIENT_ID_TAKEN" });
    expect(await closed).toBe(1008);
    await new Promise((r) => setTimeout(r, 200));
    expect(events.filter((e) => e.type === "disconnected")).toHaveLength(0);
    expect(swarm.events.filter((e) => e.type === "client" && e.clientId === "victim").map((e) => (e as { status: string }).status)).toEqual(["connected"]);
    // The id is still held once the victim is gone, for the lease, so its episodes cannot be inherited.
    await victim.stop();
    expect((await rawHello(swarm.url, MALLORY, { clientId: "victim" })).frame).toMatchObject({ code: "AJ_ERR_SWARM_CLIENT_ID_TAKEN" });
    expect((await rawHello(swarm.url, ALICE, { clientId: "victim" })).frame).toMatchObject({ type: "welcome", clientId: "victim" });
  });

  it("agentjet client exits with the reason instead of retrying forever", { timeout: 60_000 }, async () => {
    const child = spawnClient({ server: swarm.url, clientId: "cli", envs: ["count-up"], concurrency: 1, token: "wrong-token-0123456789" });
    closers.push(() => stopChild(child.child));
    const code = await new Promise<number | null>((r) => child.child.once("exit", (c) => r(c)));
    expect(code).toBe(1);
    expect(child.output()).toContain("AJ_ERR_CLIENT_UNAUTHORIZED");
    expect(child.output()).not.toContain("retrying");
  });
});
