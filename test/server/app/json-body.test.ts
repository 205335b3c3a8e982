import Fastify, { type FastifyInstance } from "fastify";
import { registerJsonBody } from "../../../server/app/json-body.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestServer, claimSolver, testConfig } from "../helpers/build-test-server.ts";
import { scriptedEngine } from "../helpers/scripted-engine.ts";

// Bodies past 64 KB are parsed on the JSON body thread (server/app/json-body.ts); they must read exactly
// as fastify's default parser reads them, errors and prototype-poisoning checks included.
describe("large JSON bodies, parsed on the JSON body thread", () => {
  let app: FastifyInstance;
  let key: string;
  const big = "x".repeat(200_000);

  beforeAll(async () => {
    app = await buildTestServer({ main: scriptedEngine(["ok<|im_end|>"], { maxContext: 1 << 20 }) }, { config: testConfig({ server: { bodyLimitBytes: 8 << 20 } }) });
    key = claimSolver(app, "e1", "t");
  });
  afterAll(async () => {
    await app.close();
  });

  const post = (payload: string) =>
    app.inject({ method: "POST", url: "/v1/chat/completions", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, payload });

  it("parses a large body to the same request, recorded as sent", async () => {
    const messages = [{ role: "user", content: `${big} é 数学 ✓` }];
    const res = await post(JSON.stringify({ model: "main", messages }));
    expect(res.statusCode).toBe(200);
    expect(app.agentjet.store.tracker.callsOf("e1").at(-1)!.messages).toEqual(messages);
  });

  it("gives back long strings exactly, Latin-1 or not, wherever they are in the body (they cross in shared memory)", async () => {
    const a = Fastify({ bodyLimit: 8 << 20 });
    registerJsonBody(a);
    a.post("/echo", async (request) => ({ json: JSON.stringify(request.body) }));
    try {
      const latin1 = `ÿ${"a".repeat(300_000)}\u0000\n"`;
      const wide = `${"数学 ✓ 🙂 ".repeat(20_000)}\ud800 lone`;
      const body = { model: "main", messages: [{ role: "user", content: latin1 }], nested: { deep: [[{ wide }], "short"], again: latin1 }, last: wide };
      const res = await a.inject({ method: "POST", url: "/echo", headers: { "content-type": "application/json" }, payload: JSON.stringify(body) });
      expect(res.statusCode).toBe(200);
      expect((res.json() as { json: string }).json).toBe(JSON.stringify(body));
    } finally {
      await a.close();
    }
  });

  it("answers invalid and poisoned large bodies like the default parser, and small ones the same", async () => {
    for (const tail of ["", '{"__proto__": {"x": 1}}', '{"constructor": {"prototype": {"x": 1}}}']) {
      const broken = tail === "" ? `{"model": "main", "messages": [{"role": "user", "content": "${big}"}` : `{"model": "main", "pad": "${big}", "meta": ${tail}}`;
      const small = tail === "" ? '{"model": "main"' : `{"model": "main", "meta": ${tail}}`;
      const [large, inPlace] = await Promise.all([post(broken), post(small)]);
      expect(large.statusCode).toBe(400);
      expect(large.json()).toEqual(inPlace.json());
    }
  });

  it("refuses a large body nested too deep (it cannot cross back from the thread) like a small one", async () => {
    const deep = `${"[".repeat(100)}${"]".repeat(100)}`;
    const [large, inPlace] = await Promise.all([post(`{"model": "main", "pad": "${big}", "meta": ${deep}}`), post(`{"model": "main", "meta": ${deep}}`)]);
    expect(large.statusCode).toBe(400);
    expect(large.json()).toEqual(inPlace.json());
  });

  it("reads bodies as fastify's own reader does: limits, announced lengths that do not match, empty and chunked bodies", async () => {
    // the same echo route behind fastify's default JSON parser and behind ours
    const echo = async (withOurs: boolean) => {
      const a = Fastify({ bodyLimit: 300_000 });
      if (withOurs) registerJsonBody(a);
      a.post("/echo", async (request) => ({ size: JSON.stringify(request.body).length }));
      a.post("/small", { bodyLimit: 100_000 }, async (request) => ({ size: JSON.stringify(request.body).length }));
      await a.ready();
      return a;
    };
    const [stock, ours] = await Promise.all([echo(false), echo(true)]);
    const body = (n: number) => JSON.stringify({ pad: "y".repeat(n) });
    const cases: Array<{ url: string; payload: string; headers?: Record<string, string> }> = [
      { url: "/echo", payload: body(200_000) },
      { url: "/echo", payload: body(299_985) },
      { url: "/echo", payload: body(400_000) },
      { url: "/small", payload: body(150_000) },
      { url: "/echo", payload: "" },
      { url: "/echo", payload: body(200_000), headers: { "content-length": "150000" } },
      { url: "/echo", payload: body(200_000), headers: { "content-length": "250000" } },
      { url: "/echo", payload: body(200_000), headers: { "content-length": "400000" } },
      { url: "/echo", payload: body(10), headers: { "content-length": "5" } },
      { url: "/echo", payload: body(200_000), headers: { "transfer-encoding": "chunked" } },
    ];
    try {
      for (const c of cases) {
        const req = { method: "POST" as const, url: c.url, payload: c.payload, headers: { "content-type": "application/json", ...c.headers } };
        const [a, b] = [await stock.inject(req), await ours.inject(req)];
        expect({ status: b.statusCode, body: b.json() as unknown }).toEqual({ status: a.statusCode, body: a.json() as unknown });
      }
    } finally {
      await Promise.all([stock.close(), ours.close()]);
    }
  });
});
