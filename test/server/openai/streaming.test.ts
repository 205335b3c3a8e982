import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { EmbeddedModelSchema, OptimizerSchema } from "../../../server/config/run-config.ts";
import { createEmbeddedEngine } from "../../../server/engines/embedded/index.ts";
import type { Engine } from "../../../server/engines/engine.ts";
import { createOpenAITokensEngine } from "../../../server/engines/openai-tokens/index.ts";
import { createZeroLatencyEngine } from "../../doubles/zero-latency-engine.ts";
import { doublesPerSuite } from "../engines/external/doubles.ts";
import { buildTestServer, claimSolver } from "../helpers/build-test-server.ts";
import { EMBEDDED_IDS } from "../../../server/tokenizers/embedded.ts";
import { embeddedTokenizer as tok } from "../helpers/scripted-engine.ts";

/**
 * True streaming: the engine hands tokens over as it makes them and the route writes each delta at
 * once. The proofs are ordering, not timing: a client sees its first delta while the engine is still
 * generating (or even while the vLLM double is held after its first token).
 */

function embeddedEngine(context = 256): Engine {
  return createEmbeddedEngine({
    vocabSize: tok.vocabSize,
    model: EmbeddedModelSchema.parse({ layers: 1, dim: 16, heads: 2, context, seed: 3 }),
    optimizer: OptimizerSchema.parse({}),
  });
}

/** Wraps an engine so a test can tell whether a generation is still running. */
function watched(engine: Engine): Engine & { running: number; finished: number } {
  const w = Object.assign(Object.create(engine) as Engine, { running: 0, finished: 0 });
  w.generate = async (ids, params) => {
    w.running++;
    try {
      return await engine.generate(ids, params);
    } finally {
      w.running--;
      w.finished++;
    }
  };
  return w;
}

async function claimKey(app: FastifyInstance, episodeId: string): Promise<string> {
  return claimSolver(app, episodeId, "t");
}

/** Reads an SSE response event by event; `onEvent` returning true stops reading. */
async function readEvents(res: Response, onEvent: (data: string) => boolean | void): Promise<void> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buf.indexOf("\n\n")) !== -1) {
      const event = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const data = event.split("\n").find((l) => l.startsWith("data: "))?.slice(6);
      if (data !== undefined && onEvent(data) === true) {
        await reader.cancel();
        return;
      }
    }
  }
}

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

/** A server on a loopback socket with `engine` as its policy, and a streamed chat call by episode `episodeId`'s solver. */
async function streamChat(engine: Engine, episodeId: string, body: Record<string, unknown>): Promise<Response> {
  const app = await buildTestServer({ main: engine });
  apps.push(app);
  const base = await app.listen({ host: "127.0.0.1", port: 0 });
  const key = await claimKey(app, episodeId);
  return fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "main", stream: true, ...body }),
  });
}

describe("embedded engine streaming", () => {
  it("hands each token over as it is made and lets the event loop run between tokens", async () => {
    const engine = embeddedEngine();
    let turnsBetween = 0;
    let tokens = 0;
    let tokensBeforeResolve = -1;
    const result = await engine
      .generate(tok.encode("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"), {
        maxTokens: 40,
        temperature: 1,
        topP: 1,
        seed: 1,
        stopIds: [],
        onToken: () => {
          tokens++;
          setImmediate(() => turnsBetween++);
        },
      })
      .then((r) => {
        tokensBeforeResolve = tokens;
        return r;
      });
    expect(result.outputIds).toHaveLength(40);
    expect(tokensBeforeResolve).toBe(40);
    // Every token but the last gave the event loop a turn before the next one was made.
    expect(turnsBetween).toBeGreaterThanOrEqual(39);
  });

  it("a streamed chat completion's first content delta arrives while the engine is still generating", async () => {
    const engine = watched(embeddedEngine());
    // A long JSON string keeps the untrained model generating for 60+ tokens.
    const schema = { type: "object", properties: { text: { type: "string", minLength: 60 } }, required: ["text"] };
    const res = await streamChat(engine, "s-embedded", {
      messages: [{ role: "user", content: "Write." }],
      max_tokens: 100,
      seed: 7,
      response_format: { type: "json_schema", json_schema: { name: "w", schema } },
    });
    expect(res.status).toBe(200);
    let runningAtFirstDelta: number | null = null;
    let content = "";
    let deltas = 0;
    await readEvents(res, (data) => {
      if (data === "[DONE]") return true;
      const delta = JSON.parse(data).choices[0]?.delta?.content as string | undefined;
      if (delta) {
        if (runningAtFirstDelta === null) runningAtFirstDelta = engine.running;
        content += delta;
        deltas++;
      }
    });
    expect(runningAtFirstDelta).toBe(1);
    expect(deltas).toBeGreaterThan(1);
    expect((JSON.parse(content) as { text: string }).text.length).toBeGreaterThanOrEqual(60);
  });

  it("a forced tool call's arguments stream while the engine is still generating, and add up to the finished call", async () => {
    // the tool's definition goes in the prompt, a character a token
    const engine = watched(embeddedEngine(1024));
    const parameters = { type: "object", properties: { note: { type: "string", minLength: 40 } }, required: ["note"] };
    const res = await streamChat(engine, "s-tool", {
      messages: [{ role: "user", content: "Note it." }],
      tools: [{ type: "function", function: { name: "note", parameters } }],
      tool_choice: "required",
      max_tokens: 120,
      seed: 11,
    });
    expect(res.status).toBe(200);
    let runningAtName: number | null = null;
    let runningAtArguments: number | null = null;
    let name = "";
    let args = "";
    let finish: string | null = null;
    await readEvents(res, (data) => {
      if (data === "[DONE]") return true;
      const choice = JSON.parse(data).choices[0];
      for (const d of choice?.delta?.tool_calls ?? []) {
        if (d.function?.name) [name, runningAtName] = [d.function.name, engine.running];
        if (d.function?.arguments) {
          runningAtArguments ??= engine.running;
          args += d.function.arguments;
        }
      }
      finish = choice?.finish_reason ?? finish;
    });
    expect([runningAtName, runningAtArguments]).toEqual([1, 1]);
    expect(finish).toBe("tool_calls");
    expect(name).toBe("note");
    expect((JSON.parse(args) as { note: string }).note.length).toBeGreaterThanOrEqual(40);
  });
});

describe("vLLM-shaped engine streaming", () => {
  // The double samples whole characters only (no byte ids), so its first token is a visible delta.
  const rig = doublesPerSuite({ replicas: 1, vllm: { vocabSize: EMBEDDED_IDS.firstByte } });

  it("asks the replica to stream and hands over its first token while the replica is still held", async () => {
    const engine = createOpenAITokensEngine(rig().config({ maxContext: 256 }));
    const release = rig().replicas[0]!.pauseAfterFirstToken();
    const seen: number[] = [];
    let resolved = false;
    const result = await engine.generate(tok.encode("<|im_start|>user\nhi<|im_end|>\n"), {
      maxTokens: 20,
      temperature: 1,
      topP: 1,
      seed: 5,
      stopIds: [],
      onToken: (id) => {
        if (!resolved) seen.push(id);
        // The double sends nothing more until this runs: a buffered client would wait forever.
        release();
      },
    });
    resolved = true;
    expect(result.outputIds).toHaveLength(20);
    expect(seen).toEqual(result.outputIds);
    expect((rig().replicas[0]!.requests.at(-1) as { stream: boolean }).stream).toBe(true);
  });

  it("a streamed chat completion through the route gets its first delta while the replica is held", async () => {
    const engine = createOpenAITokensEngine(rig().config({ maxContext: 256 }));
    const app = await buildTestServer({ main: engine });
    apps.push(app);
    const base = await app.listen({ host: "127.0.0.1", port: 0 });
    const key = await claimKey(app, "s-vllm");
    const release = rig().replicas[0]!.pauseAfterFirstToken();
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "main", messages: [{ role: "user", content: "hi" }], stream: true, max_tokens: 20, seed: 5 }),
    });
    expect(res.status).toBe(200);
    const events: string[] = [];
    let firstDelta: string | null = null;
    await readEvents(res, (data) => {
      events.push(data);
      const delta = data === "[DONE]" ? undefined : (JSON.parse(data).choices[0]?.delta?.content as string | undefined);
      if (delta && firstDelta === null) {
        firstDelta = delta;
        // The replica has sent one token and waits: this delta is that token, streamed through.
        release();
      }
      return data === "[DONE]";
    });
    expect(JSON.parse(events[0]!).choices[0].delta.role).toBe("assistant");
    expect(firstDelta).not.toBeNull();
    expect(events.at(-1)).toBe("[DONE]");
    const served = rig().replicas[0]!.served.at(-1)!;
    const recorded = app.agentjet.store.tracker.callsOf("s-vllm")[0]!;
    expect(recorded.outputIds).toEqual(served.outputIds);
  });
});

describe("streamed text", () => {
  it("joins to the recorded output even where the model's bytes are no character", async () => {
    const emoji = tok.encode("😀");
    // a lone continuation byte, then a whole four-byte character: decoded apart, the byte and the first
    // three of the character's were three U+FFFD; decoded with the output, one U+FFFD and the emoji
    const ids = [emoji[3]!, ...emoji, ...tok.encode(" ok<|im_end|>")];
    const app = await buildTestServer({ main: createZeroLatencyEngine({ respond: () => ids }) });
    apps.push(app);
    const key = claimSolver(app, "s-bytes", "t");
    const res = await app.inject({ method: "POST", url: "/v1/chat/completions", headers: { authorization: `Bearer ${key}` }, payload: { model: "main", messages: [{ role: "user", content: "x" }], stream: true } });
    const deltas = res.body.split("\n\n").filter((e) => e.startsWith("data: {")).map((e) => JSON.parse(e.slice(6)).choices[0]?.delta?.content ?? "");
    const recorded = app.agentjet.store.tracker.callsOf("s-bytes")[0]!.outputText;
    expect(recorded).toBe("\uFFFD😀 ok");
    expect(deltas.join("")).toBe(recorded);
  });
});

describe("a failure after the stream began", () => {
  it("ends the stream with an error event (chat and Responses shapes)", async () => {
    let app!: FastifyInstance;
    let current = "";
    const engine = createZeroLatencyEngine({
      respond: () => {
        // The episode ends while the engine works: nothing may be recorded, the client must hear why.
        app.agentjet.store.abort(current, { kind: "cancelled", message: "stopped" });
        return tok.encode("late<|im_end|>");
      },
    });
    app = await buildTestServer({ main: engine });
    apps.push(app);
    for (const [url, body] of [
      ["/v1/chat/completions", { messages: [{ role: "user", content: "x" }], stream: true }],
      ["/v1/responses", { input: "x", stream: true }],
    ] as const) {
      current = `s-err-${url.length}`;
      const store = app.agentjet.store;
      const key = claimSolver(app, current, "t");
      const res = await app.inject({ method: "POST", url, headers: { authorization: `Bearer ${key}` }, payload: { model: "main", ...body } });
      expect(res.statusCode).toBe(200);
      const lastData = res.body.trim().split("\n\n").at(-1)!.split("\n").at(-1)!.slice("data: ".length);
      const last = JSON.parse(lastData) as { error?: { code: string }; type?: string; code?: string };
      expect(last.error?.code ?? last.code).toBe("AJ_ERR_EPISODE_CLOSED");
      if (url === "/v1/responses") expect(last.type).toBe("error");
      expect(store.tracker.callsOf(current)).toHaveLength(0);
    }
  });
});
