import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { buildTestServer, claimSolver } from "../helpers/build-test-server.ts";
import { scriptedEngine } from "../helpers/scripted-engine.ts";

/**
 * A streamed tool call sends its arguments as the model writes them (the scripted engine hands its ids
 * over one by one, as a real one does), and the finished call is the same call: the same id, name and
 * arguments as the reply that is not streamed gives.
 */

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

async function setup(replies: string[]) {
  const app = await buildTestServer({ main: scriptedEngine(replies) });
  apps.push(app);
  const key = claimSolver(app);
  const post = (url: string, body: Record<string, unknown>) =>
    app.inject({ method: "POST", url, headers: { authorization: `Bearer ${key}` }, payload: { model: "main", ...body } });
  return { app, post };
}

/** The `data:` of each SSE event, parsed (`[DONE]` left out). */
const events = (body: string): Array<Record<string, any>> =>
  body
    .split("\n\n")
    .map((e) => e.slice(e.indexOf("data: ") + 6))
    .filter((d) => d.startsWith("{"))
    .map((d) => JSON.parse(d) as Record<string, any>);

interface StreamedCall {
  id: string;
  name: string;
  arguments: string;
  /** Chunks that carried its arguments. */
  pieces: number;
}

/** A chat stream's tool calls put together by index as a client does, the chunk each came in, and the finish reason. */
function toolCallsOf(body: string) {
  const calls: StreamedCall[] = [];
  let finish: string | null = null;
  let finishAt = -1;
  const firstAt: number[] = [];
  events(body).forEach((e, at) => {
    const choice = e.choices[0];
    if (!choice) return;
    for (const d of choice.delta.tool_calls ?? []) {
      const seen = calls[d.index];
      if (!seen) firstAt[d.index] = at;
      calls[d.index] = {
        id: d.id ?? seen!.id,
        name: d.function?.name ?? seen!.name,
        arguments: (seen?.arguments ?? "") + (d.function?.arguments ?? ""),
        pieces: (seen?.pieces ?? 0) + (d.function?.arguments ? 1 : 0),
      };
    }
    if (choice.finish_reason) [finish, finishAt] = [choice.finish_reason, at];
  });
  return { calls, finish, finishAt, firstAt };
}

const TOOLS = [
  { type: "function", function: { name: "add", parameters: { type: "object" } } },
  { type: "function", function: { name: "mul", parameters: { type: "object" } } },
];
const ADD = '{"a": 1, "b": "x}]\\"y"}';
const MUL = '[2, {"c": 3}]';
const TWO_CALLS = `Adding.<tool_call>{"name": "add", "arguments": ${ADD}}</tool_call>\n<tool_call>{"name": "mul", "arguments": ${MUL}}</tool_call><|im_end|>`;
const MESSAGES = [{ role: "user", content: "Sums?" }];

describe("streamed tool calls", () => {
  it("send their arguments as they are written, in chunks that add up to the finished calls", async () => {
    const { post } = await setup([TWO_CALLS]);
    const whole = (await post("/v1/chat/completions", { messages: MESSAGES, tools: TOOLS })).json();
    const streamed = await post("/v1/chat/completions", { messages: MESSAGES, tools: TOOLS, stream: true });
    const { calls, finish, finishAt, firstAt } = toolCallsOf(streamed.body);
    expect(finish).toBe("tool_calls");
    expect(calls.map((c) => [c.name, c.arguments])).toEqual([
      ["add", ADD],
      ["mul", MUL],
    ]);
    expect(whole.choices[0].message.tool_calls.map((c: { function: { name: string; arguments: string } }) => [c.function.name, c.function.arguments])).toEqual([
      ["add", ADD],
      ["mul", MUL],
    ]);
    // one chunk per token or so, the first call's before the second begins, all before the finish
    for (const c of calls) expect(c.pieces).toBeGreaterThan(5);
    expect(firstAt[0]!).toBeLessThan(firstAt[1]!);
    expect(firstAt[1]!).toBeLessThan(finishAt);
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);
    for (const c of calls) expect(c.id).toMatch(/^call_[0-9a-f]{24}$/);
  });

  it("stream only the first call with parallel_tool_calls false, which is the one the reply gives", async () => {
    const { post } = await setup([TWO_CALLS]);
    const { calls, finish } = toolCallsOf((await post("/v1/chat/completions", { messages: MESSAGES, tools: TOOLS, stream: true, parallel_tool_calls: false })).body);
    expect(finish).toBe("tool_calls");
    expect(calls.map((c) => [c.name, c.arguments])).toEqual([["add", ADD]]);
  });

  it("come whole at the end when arguments are written before the name, or are not an object or array", async () => {
    const reply = '<tool_call>{"arguments": {"a": 1}, "name": "add"}</tool_call><tool_call>{"name": "mul", "arguments": "{\\"c\\": 3}"}</tool_call><|im_end|>';
    const { post } = await setup([reply]);
    const { calls, finish } = toolCallsOf((await post("/v1/chat/completions", { messages: MESSAGES, tools: TOOLS, stream: true })).body);
    expect(finish).toBe("tool_calls");
    expect(calls).toEqual([
      { id: expect.stringMatching(/^call_/), name: "add", arguments: '{"a": 1}', pieces: 1 },
      { id: expect.stringMatching(/^call_/), name: "mul", arguments: '{"c": 3}', pieces: 1 },
    ]);
  });

  it("cut by max_tokens: what was written went out, and the finish reason is length", async () => {
    const { post } = await setup([TWO_CALLS]);
    const { calls, finish } = toolCallsOf((await post("/v1/chat/completions", { messages: MESSAGES, tools: TOOLS, stream: true, max_tokens: 40 })).body);
    expect(finish).toBe("length");
    expect(calls).toHaveLength(1);
    expect(calls[0]!.name).toBe("add");
    expect(ADD.startsWith(calls[0]!.arguments)).toBe(true);
    expect(calls[0]!.arguments.length).toBeGreaterThan(0);
  });

  it("through the Responses API: function_call items with argument deltas, numbered as the final output lists them", async () => {
    const { post } = await setup([TWO_CALLS]);
    const tools = TOOLS.map((t) => ({ type: "function", name: t.function.name, parameters: t.function.parameters }));
    const all = events((await post("/v1/responses", { input: "Sums?", tools, stream: true })).body);
    const added = all.filter((e) => e.type === "response.output_item.added").map((e) => [e.output_index, e.item.type]);
    expect(added).toEqual([
      [0, "message"],
      [1, "function_call"],
      [2, "function_call"],
    ]);
    const completed = all.at(-1)!;
    expect(completed.type).toBe("response.completed");
    const output = completed.response.output as Array<{ type: string; id: string; name?: string; arguments?: string; call_id?: string }>;
    expect(output.map((o) => o.type)).toEqual(["message", "function_call", "function_call"]);
    for (const index of [1, 2]) {
      const item = output[index]!;
      const deltas = all.filter((e) => e.type === "response.function_call_arguments.delta" && e.output_index === index);
      expect(deltas.length).toBeGreaterThan(5);
      expect(deltas.every((d) => d.item_id === item.id)).toBe(true);
      expect(deltas.map((d) => d.delta).join("")).toBe(item.arguments);
      const addedItem = all.find((e) => e.type === "response.output_item.added" && e.output_index === index)!.item;
      expect([addedItem.id, addedItem.call_id, addedItem.name]).toEqual([item.id, item.call_id, item.name]);
    }
    expect(output.slice(1).map((o) => o.arguments)).toEqual([ADD, MUL]);
    // the first call's arguments began before the second call did
    const seqOf = (pred: (e: Record<string, any>) => boolean) => all.find(pred)!.sequence_number as number;
    expect(seqOf((e) => e.type === "response.function_call_arguments.delta" && e.output_index === 1)).toBeLessThan(
      seqOf((e) => e.type === "response.output_item.added" && e.output_index === 2),
    );
    });

  it("through the Responses API: text after a streamed call opens its message item after the call, and the output lists it there", async () => {
    const { post } = await setup(['<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>\nDone.<|im_end|>']);
    const tools = [{ type: "function", name: "add", parameters: { type: "object" } }];
    const all = events((await post("/v1/responses", { input: "Sums?", tools, stream: true })).body);
    const added = all.filter((e) => e.type === "response.output_item.added").map((e) => [e.output_index, e.item.type]);
    expect(added).toEqual([
      [0, "function_call"],
      [1, "message"],
    ]);
    const output = all.at(-1)!.response.output as Array<{ type: string; content?: Array<{ text: string }> }>;
    expect(output.map((o) => o.type)).toEqual(["function_call", "message"]);
    expect(output[1]!.content![0]!.text).toBe("Done.");
});
});
