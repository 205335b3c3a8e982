import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { promptIds } from "../../../server/tokenizers/prompt-ids.ts";
import { createQwen3Tokenizer } from "../../../server/tokenizers/index.ts";
import { createZeroLatencyEngine } from "../../doubles/zero-latency-engine.ts";
import { buildTestServer, claimSolver, postChat, testConfig } from "../helpers/build-test-server.ts";
import { embeddedTokenizer as tok, scriptedEngine } from "../helpers/scripted-engine.ts";

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

async function setup(replies: string[], opts: { maxContext?: number; now?: () => number } = {}) {
  const { now, ...engineOpts } = opts;
  const engine = scriptedEngine(replies, engineOpts);
  const app = await buildTestServer({ main: engine }, now === undefined ? {} : { now });
  apps.push(app);
  const store = app.agentjet.store;
  const key = claimSolver(app);
  const chat = (body: Record<string, unknown>, authKey = key) => postChat(app, authKey, body);
  return { app, store, engine, key, chat };
}

const TOOLS = [{ type: "function", function: { name: "add", description: "Adds", parameters: { type: "object" } } }];

describe("POST /v1/chat/completions", () => {
  it("answers with content, usage and log-probs, and records the call", async () => {
    const { chat, store, engine } = await setup(["Hello!<|im_end|>"]);
    const res = await chat({ messages: [{ role: "user", content: "Hi" }], logprobs: true, top_logprobs: 2 });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.choices[0].message).toEqual({ role: "assistant", content: "Hello!", refusal: null });
    expect(body.choices[0].finish_reason).toBe("stop");
    expect(body.usage).toEqual({ prompt_tokens: engine.prompts[0]!.length, completion_tokens: 7, total_tokens: engine.prompts[0]!.length + 7 });
    expect(body.choices[0].logprobs.content.map((t: { token: string }) => t.token).join("")).toBe("Hello!");
    expect(body.choices[0].logprobs.content[0].top_logprobs).toHaveLength(2);
    // OpenAI's key order, in the text as written
    expect(Object.keys(body.choices[0].logprobs.content[0])).toEqual(["token", "logprob", "bytes", "top_logprobs"]);
    expect(Object.keys(body.choices[0].logprobs.content[0].top_logprobs[0])).toEqual(["token", "logprob", "bytes"]);
    const [call] = store.tracker.callsOf("e1");
    expect(call).toMatchObject({ agentId: "solver", policy: "main", seq: 0, outputText: "Hello!", finishReason: "stop", version: 0 });
    expect(call!.outputIds).toEqual(tok.encode("Hello!<|im_end|>"));
    expect(call!.outputLogprobs).toHaveLength(7);
    expect(promptIds(call!)).toEqual(engine.prompts[0]);
    expect(call!.messages).toEqual([{ role: "user", content: "Hi" }]);
  });

  it("joins a prompt longer than a slice a slice at a time, to the same ids the engine reads and the record holds", async () => {
    const { chat, store, engine } = await setup(["ok<|im_end|>"], { maxContext: 1 << 20 });
    const content = "abc é数\n".repeat(30_000);
    const res = await chat({ messages: [{ role: "system", content: "s" }, { role: "user", content }] });
    expect(res.statusCode).toBe(200);
    const [call] = store.tracker.callsOf("e1");
    const recorded = promptIds(call!);
    expect(recorded.length).toBeGreaterThan(1 << 16);
    expect(engine.prompts[0]).toEqual(recorded);
    expect(res.json().usage.prompt_tokens).toBe(recorded.length);
  });

  it("joins text parts and maps developer to system", async () => {
    const { chat, engine } = await setup(["ok<|im_end|>"]);
    await chat({ messages: [{ role: "developer", content: "Rules." }, { role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] }] });
    expect(tok.decode(engine.prompts[0]!)).toBe("<|im_start|>system\nRules.<|im_end|>\n<|im_start|>user\nab<|im_end|>\n<|im_start|>assistant\n");
  });

  it("parses tool calls, then splices the exact generated ids into the next call's context", async () => {
    const gen = 'Adding.<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call><|im_end|>';
    const { chat, store, engine } = await setup([gen, "3<|im_end|>"]);
    const first = (await chat({ messages: [{ role: "user", content: "1+2?" }], tools: TOOLS })).json();
    expect(first.choices[0].finish_reason).toBe("tool_calls");
    const msg = first.choices[0].message;
    expect(msg.content).toBe("Adding.");
    expect(msg.tool_calls).toEqual([{ id: expect.stringMatching(/^call_/), type: "function", function: { name: "add", arguments: '{"a": 1, "b": 2}' } }]);
    const second = await chat({
      tools: TOOLS,
      messages: [
        { role: "user", content: "1+2?" },
        { role: "assistant", content: msg.content, tool_calls: msg.tool_calls },
        { role: "tool", tool_call_id: msg.tool_calls[0].id, content: "3" },
      ],
    });
    expect(second.json().choices[0].message.content).toBe("3");
    const [c0, c1] = store.tracker.callsOf("e1");
    expect(c1!.seq).toBe(1);
    expect(c1!.segments[2]!.ids).toEqual([...c0!.headerIds, ...c0!.outputIds, ...tok.encode("\n")]);
    // The spliced ids are the generation's own, not a re-rendering (which would print the JSON compactly).
    expect(tok.decode(c1!.segments[2]!.ids)).toContain('{"name": "add", "arguments": {"a": 1, "b": 2}}');
    const before = promptIds({ segments: c0!.segments, headerIds: [] });
    expect(engine.prompts[1]!.slice(0, before.length)).toEqual(before);
  });

  it("leaves tool-call syntax as text with tool_choice none", async () => {
    const { chat } = await setup(['<tool_call>{"name": "add", "arguments": {}}</tool_call><|im_end|>']);
    const body = (await chat({ messages: [{ role: "user", content: "x" }], tools: TOOLS, tool_choice: "none" })).json();
    expect(body.choices[0].finish_reason).toBe("stop");
    expect(body.choices[0].message.content).toContain("<tool_call>");
  });

  it("streams SSE chunks with usage in the final chunk and [DONE]", async () => {
    const { chat } = await setup(["Streamed.<|im_end|>"]);
    const res = await chat({ messages: [{ role: "user", content: "s" }], stream: true, stream_options: { include_usage: true } });
    expect(res.headers["content-type"]).toContain("text/event-stream");
    const events = res.body.split("\n\n").filter(Boolean).map((e) => e.replace(/^data: /, ""));
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("")).toBe("Streamed.");
    expect(chunks.at(-2).choices[0].finish_reason).toBe("stop");
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: 10 } });
  });

  it("cuts at a stop string: content without it, ids kept up to the token that completed it", async () => {
    const { chat, store } = await setup(["abcSTOPdef<|im_end|>"]);
    const body = (await chat({ messages: [{ role: "user", content: "x" }], stop: ["STOP", "zz"] })).json();
    expect(body.choices[0].message.content).toBe("abc");
    expect(body.choices[0].finish_reason).toBe("stop");
    expect(tok.decode(store.tracker.callsOf("e1")[0]!.outputIds)).toBe("abcSTOP");
  });

  it("honours max_tokens with finish_reason length", async () => {
    const { chat, store } = await setup(["a long answer<|im_end|>"]);
    const body = (await chat({ messages: [{ role: "user", content: "x" }], max_tokens: 4 })).json();
    expect(body.choices[0]).toMatchObject({ finish_reason: "length", message: { content: "a lo" } });
    expect(store.tracker.callsOf("e1")[0]!.finishReason).toBe("length");
  });

  it("answers a context overflow with finish_reason length and records it as overflow", async () => {
    const { chat, store, engine } = await setup(["never"], { maxContext: 64 });
    const body = (await chat({ messages: [{ role: "user", content: "x".repeat(60) }], max_tokens: 16 })).json();
    expect(body.choices[0]).toMatchObject({ finish_reason: "length", message: { content: "" } });
    expect(engine.prompts).toHaveLength(0);
    expect(store.tracker.callsOf("e1")[0]).toMatchObject({ finishReason: "overflow", outputIds: [] });
  });

  it("refreshes the idle timer on every call", async () => {
    let clock = 1_000;
    const { chat, store } = await setup(["ok<|im_end|>"], { now: () => clock });
    expect(store.get("e1")!.lastActivityAt).toBe(1_000);
    clock = 6_000;
    await chat({ messages: [{ role: "user", content: "x" }] });
    expect(store.get("e1")!.lastActivityAt).toBe(6_000);
  });
});

describe("the qwen3 tokenizer, end to end", () => {
  it("a reply that is only <|im_end|> answers empty content, streamed or not (its decode of no ids threw: a 500)", async () => {
    const tokenizer = createQwen3Tokenizer();
    const engine = createZeroLatencyEngine({ defaultIds: tokenizer.encode("<|im_end|>") });
    const app = await buildTestServer({ main: engine }, { config: testConfig({ policies: { main: { tokenizer: "qwen3" } } }) });
    apps.push(app);
    const key = claimSolver(app);
    const res = await postChat(app, key, { messages: [{ role: "user", content: "Say nothing." }], stop: ["x"] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().choices[0]).toMatchObject({ message: { role: "assistant", content: "" }, finish_reason: "stop" });
    const streamed = await postChat(app, key, { messages: [{ role: "user", content: "Again." }], stream: true });
    expect(streamed.statusCode).toBe(200);
    const events = streamed.body.split("\n\n").filter(Boolean).map((e) => e.replace(/^data: /, ""));
    expect(events.at(-1)).toBe("[DONE]");
    expect(events.some((e) => e.includes('"error"'))).toBe(false);
    expect(app.agentjet.store.tracker.callsOf("e1").map((c) => c.outputText)).toEqual(["", ""]);
  });
});

describe("errors in OpenAI's shape", () => {
  it("401 for missing, malformed and forged keys; 409 once the episode ended", async () => {
    const { chat, store, app, key } = await setup(["ok<|im_end|>"]);
    const noKey = await app.inject({ method: "POST", url: "/v1/chat/completions", payload: { model: "m", messages: [] } });
    expect(noKey.statusCode).toBe(401);
    expect(noKey.json().error).toMatchObject({ type: "authentication_error", code: "AJ_ERR_INVALID_API_KEY" });
    expect((await chat({ messages: [{ role: "user", content: "x" }] }, "sk-aj-forged.sig")).statusCode).toBe(401);
    store.end("e1", { rewards: { solver: 1 } });
    const late = await chat({ messages: [{ role: "user", content: "x" }] }, key);
    expect(late.statusCode).toBe(409);
    expect(late.json().error.code).toBe("AJ_ERR_EPISODE_CLOSED");
    expect(store.tracker.callsOf("e1")).toHaveLength(0);
  });

  it("400 with the offending param for invalid bodies", async () => {
    const { chat } = await setup(["ok<|im_end|>"]);
    const res = await chat({ messages: [{ role: "wizard", content: "x" }] });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ type: "invalid_request_error", code: "AJ_ERR_INVALID_REQUEST", param: "messages.0.role" });
    expect((await chat({ messages: [{ role: "user", content: "x" }], temperature: "hot" })).json().error.param).toBe("temperature");
  });

  it("404 for unknown routes", async () => {
    const { app } = await setup([]);
    const res = await app.inject({ method: "GET", url: "/v2/nothing" });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe("AJ_ERR_ROUTE_NOT_FOUND");
  });
});

describe("calls racing the episode's end", () => {
  it("a call in flight when its episode ends gets 409 and is not recorded", async () => {
    let release: () => void = () => {};
    let entered: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const started = new Promise<void>((r) => (entered = r));
    const engine = scriptedEngine(["late<|im_end|>"]);
    const generate = engine.generate.bind(engine);
    engine.generate = async (ids, params) => {
      entered();
      await gate;
      return generate(ids, params);
    };
    const app = await buildTestServer({ main: engine });
    apps.push(app);
    const store = app.agentjet.store;
    const pending = postChat(app, claimSolver(app, "race", "t"), { messages: [{ role: "user", content: "x" }] });
    await started;
    store.end("race", { rewards: { solver: 0 } });
    release();
    const res = await pending;
    expect(res.statusCode).toBe(409);
    expect(store.tracker.callsOf("race")).toEqual([]);
  });
});

describe("GET /v1/models", () => {
  it("lists policies and frozen models", async () => {
    const { app } = await setup([]);
    const res = await app.inject({ method: "GET", url: "/v1/models" });
    expect(res.json()).toMatchObject({ object: "list", data: [{ id: "main", object: "model", owned_by: "agentjet-policy" }] });
  });
});
