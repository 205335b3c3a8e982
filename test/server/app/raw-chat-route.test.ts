import { request as httpRequest } from "node:http";
import { Writable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { buildTestServer, claimSolver } from "../helpers/build-test-server.ts";
import { scriptedEngine } from "../helpers/scripted-engine.ts";

/**
 * The chat route's raw path (server/app/raw-chat-route.ts): plain chat calls are served at the HTTP
 * server, ahead of fastify, and must answer and record exactly what the fastify route does; everything
 * else it leaves to fastify. Each case is sent over a real socket and, for comparison, through `inject`
 * (which always takes the fastify route).
 */

const MESSAGES = [
  { role: "system", content: "You are terse." },
  { role: "user", content: "What is six times seven?" },
];
const BODY = { model: "main", messages: MESSAGES };

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

let app: FastifyInstance | null = null;
/** Requests fastify itself answered (its onResponse hook ran). */
let fastifySaw = 0;

async function start(opts: Parameters<typeof buildTestServer>[1] = {}): Promise<{ app: FastifyInstance; port: number }> {
  const a = await buildTestServer({ main: scriptedEngine(["42"]) }, opts);
  a.addHook("onResponse", async () => {
    fastifySaw += 1;
  });
  await a.listen({ host: "127.0.0.1", port: 0 });
  app = a;
  fastifySaw = 0;
  return { app: a, port: (a.server.address() as { port: number }).port };
}

/** A turn for fastify's onResponse hook, which runs once the response is written (the client may read it first). */
const settled = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 5));

afterEach(async () => {
  await app?.close();
  app = null;
});

function send(port: number, headers: Record<string, string>, body: string | Buffer, path = "/v1/chat/completions"): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path, method: "POST", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const jsonHeaders = (key: string, body: string | Buffer): Record<string, string> => ({
  authorization: `Bearer ${key}`,
  "content-type": "application/json",
  "content-length": String(Buffer.byteLength(body)),
});

async function viaFastify(a: FastifyInstance, headers: Record<string, string>, body: string): Promise<Answer> {
  const r = await a.inject({ method: "POST", url: "/v1/chat/completions", headers, payload: body });
  return { status: r.statusCode, headers: r.headers as Answer["headers"], text: r.body };
}

/** A completion's JSON without what differs from call to call (its id and time). */
function stable(text: string): unknown {
  const j = JSON.parse(text) as Record<string, unknown>;
  delete j.id;
  delete j.created;
  return j;
}

describe("the raw chat route", () => {
  it("serves a plain chat call ahead of fastify with the answer, headers and record of the fastify route", async () => {
    const { app: a, port } = await start();
    const body = JSON.stringify(BODY);
    const raw = await send(port, jsonHeaders(claimSolver(a, "e1"), body), body);
    await settled();
    expect(fastifySaw).toBe(0);
    const routed = await viaFastify(a, jsonHeaders(claimSolver(a, "e2"), body), body);
    expect(raw.status).toBe(200);
    expect(stable(raw.text)).toEqual(stable(routed.text));
    expect(raw.headers["content-type"]).toBe(routed.headers["content-type"]);
    expect(Number(raw.headers["content-length"])).toBe(Buffer.byteLength(raw.text));
    const [r] = a.agentjet.store.tracker.callsOf("e1");
    const [f] = a.agentjet.store.tracker.callsOf("e2");
    expect(r!.messages).toEqual(MESSAGES);
    expect({ segments: r!.segments, header: r!.headerIds, out: r!.outputIds, text: r!.outputText }).toEqual({
      segments: f!.segments,
      header: f!.headerIds,
      out: f!.outputIds,
      text: f!.outputText,
    });
  });

  it("answers a refused call exactly as the fastify route does", async () => {
    const { app: a, port } = await start();
    const deep = `${'{"a":'.repeat(300)}1${"}".repeat(300)}`;
    const closedKey = claimSolver(a, "closed");
    a.agentjet.store.abort("closed", { kind: "cancelled", message: "test" });
    const cases: Array<{ label: string; key?: string; auth?: string; body: string }> = [
      { label: "invalid JSON", body: '{"model":"main","messages":[' },
      { label: "prototype poisoning", body: `{"model":"main","__proto__":{"x":1},"messages":${JSON.stringify(MESSAGES)}}` },
      { label: "constructor poisoning", body: `{"model":"main","constructor":{"prototype":{"x":1}},"messages":${JSON.stringify(MESSAGES)}}` },
      { label: "nested too deep", body: `{"model":"main","messages":${JSON.stringify(MESSAGES)},"metadata":${deep}}` },
      { label: "no messages", body: '{"model":"main"}' },
      { label: "a wrong type", body: JSON.stringify({ ...BODY, temperature: "hot" }) },
      { label: "not an object", body: "[1,2]" },
      { label: "an unknown key", auth: "Bearer sk-aj-nope", body: JSON.stringify(BODY) },
      { label: "a malformed header", auth: "Basic abc", body: JSON.stringify(BODY) },
      { label: "a closed episode", key: closedKey, body: JSON.stringify(BODY) },
    ];
    for (const c of cases) {
      const headers = jsonHeaders(c.key ?? "unused", c.body);
      if (c.auth) headers.authorization = c.auth;
      else if (!c.key) headers.authorization = `Bearer ${claimSolver(a, `ep-${c.label}-raw`)}`;
      const saw = fastifySaw;
      const raw = await send(port, headers, c.body);
      await settled();
      expect({ label: c.label, saw: fastifySaw }).toEqual({ label: c.label, saw });
      if (!c.auth && !c.key) headers.authorization = `Bearer ${claimSolver(a, `ep-${c.label}-fastify`)}`;
      const routed = await viaFastify(a, headers, c.body);
      expect({ label: c.label, status: raw.status, body: JSON.parse(raw.text) }).toEqual({ label: c.label, status: routed.status, body: JSON.parse(routed.text) });
      expect(raw.status, c.label).toBeGreaterThanOrEqual(400);
    }
  });

  it("leaves to fastify what it does not take: another content type, no key, a foreign Host, a large or chunked body", async () => {
    const { app: a, port } = await start();
    const body = JSON.stringify(BODY);
    const key = claimSolver(a, "e1");
    // answered as fastify answers them through `inject`
    const cases: Array<{ label: string; headers: Record<string, string>; body: string }> = [
      { label: "text/plain", headers: { ...jsonHeaders(key, body), "content-type": "text/plain" }, body },
      { label: "no key", headers: { "content-type": "application/json", "content-length": String(body.length) }, body },
      { label: "foreign Host", headers: { ...jsonHeaders(key, body), host: "evil.example" }, body },
    ];
    for (const c of cases) {
      const saw = fastifySaw;
      const r = await send(port, c.headers, c.body);
      await settled();
      expect({ label: c.label, saw: fastifySaw }).toEqual({ label: c.label, saw: saw + 1 });
      const routed = await viaFastify(a, c.headers, c.body);
      expect({ label: c.label, status: r.status, body: r.text }).toEqual({ label: c.label, status: routed.status, body: routed.text });
      expect(r.status, c.label).toBeGreaterThanOrEqual(400);
    }
    // served by the fastify route
    const large = JSON.stringify({ model: "main", messages: [{ role: "user", content: "x".repeat(70_000) }] });
    const chunked = jsonHeaders(key, body);
    delete chunked["content-length"];
    chunked["transfer-encoding"] = "chunked";
    for (const [label, headers, b] of [["a body over 64 KB", jsonHeaders(key, large), large], ["chunked", chunked, body]] as const) {
      const saw = fastifySaw;
      const r = await send(port, headers, b);
      await settled();
      expect({ label, status: r.status, saw: fastifySaw }).toEqual({ label, status: 200, saw: saw + 1 });
    }
  });

  it("streams a stream: true call as server-sent events", async () => {
    const { app: a, port } = await start();
    const body = JSON.stringify({ ...BODY, stream: true });
    const r = await send(port, jsonHeaders(claimSolver(a, "e1"), body), body);
    await settled();
    expect(fastifySaw).toBe(0);
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toContain("text/event-stream");
    const events = r.text.split("\n\n").filter((e) => e.startsWith("data: "));
    expect(events.at(-1)).toBe("data: [DONE]");
    const content = events
      .slice(0, -1)
      .map((e) => JSON.parse(e.slice(6)) as { choices: Array<{ delta: { content?: string } }> })
      .map((e) => e.choices[0]?.delta.content ?? "")
      .join("");
    expect(content).toBe("42");
  });

  it("writes fastify's access-log lines when the logger is at info", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split("\n")) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    const { app: a, port } = await start({ logger: { level: "info", stream } });
    const body = JSON.stringify(BODY);
    expect((await send(port, jsonHeaders(claimSolver(a, "e1"), body), body)).status).toBe(200);
    const mine = lines.filter((l) => typeof l.reqId === "string" && l.reqId.startsWith("chat-"));
    expect(mine.map((l) => l.msg)).toEqual(["incoming request", "request completed"]);
    expect(mine[0]!.req).toMatchObject({ method: "POST", url: "/v1/chat/completions", host: `127.0.0.1:${port}`, remoteAddress: "127.0.0.1" });
    expect(mine[1]!.res).toEqual({ statusCode: 200 });
    // the same fields as fastify's own line for a request it routes
    const models = await fetch(`http://127.0.0.1:${port}/v1/models`);
    expect(models.status).toBe(200);
    await settled();
    const routed = lines.find((l) => l.msg === "incoming request" && (l.req as { url?: string }).url === "/v1/models")!;
    expect(Object.keys(mine[0]!.req as object).sort()).toEqual(Object.keys(routed.req as object).sort());
    expect(Object.keys(mine[1]!).filter((k) => k !== "time").sort()).toEqual(Object.keys(lines.find((l) => l.msg === "request completed" && l.reqId === routed.reqId)!).filter((k) => k !== "time").sort());
  });

  it("leaves requests to fastify once the app closes", async () => {
    const { app: a } = await start();
    const route = a.agentjet.rawChat();
    expect(route).not.toBeNull();
    await a.close();
    app = null;
    expect(a.agentjet.rawChat()).toBeNull();
  });
});
