import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createOpenAI } from "@ai-sdk/openai";
import { ChatOpenAI } from "@langchain/openai";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool as agentTool } from "@openai/agents";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { buildServer } from "../../../server/app/build-server.ts";
import { createZeroLatencyEngine } from "../../doubles/zero-latency-engine.ts";
import { promptIds } from "../../../server/tokenizers/prompt-ids.ts";
import type { TrackedCall } from "../../../server/tracker/tracker.ts";
import { claimSolver, testConfig } from "../helpers/build-test-server.ts";
import { embeddedTokenizer as tok } from "../helpers/scripted-engine.ts";

/**
 * An engine whose answer depends only on the conversation so far: a tool call until a tool result is in
 * the context, then the answer. Two episodes that hold the same conversation get the same tokens.
 */
function conversationEngine() {
  return createZeroLatencyEngine({
    respond: (promptIds) => {
      const text = tok.decode(promptIds);
      if (!text.includes("# Tools")) return tok.encode("Hello from the policy.<|im_end|>");
      if (text.includes("<|im_start|>tool")) return tok.encode("The sum is 5.<|im_end|>");
      return tok.encode('<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call><|im_end|>');
    },
  });
}

const ADD_PARAMS = { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"], additionalProperties: false } as const;

describe("Responses API clients against a real socket", () => {
  let app: FastifyInstance;
  let baseURL: string;
  let runDir: string;
  let n = 0;

  beforeAll(async () => {
    setTracingDisabled(true);
    runDir = mkdtempSync(join(tmpdir(), "aj-responses-"));
    app = await buildServer({ config: testConfig(), runDir, keySecret: "e2e", reclaimTimer: false, engines: { main: conversationEngine() } });
    baseURL = `${await app.listen({ host: "127.0.0.1", port: 0 })}/v1`;
  });

  afterAll(async () => {
    await app.close();
    rmSync(runDir, { recursive: true, force: true });
  });

  function episode(): { id: string; key: string } {
    const id = `ep-${n++}`;
    return { id, key: claimSolver(app, id, "t") };
  }

  const calls = (id: string): TrackedCall[] => app.agentjet.store.tracker.callsOf(id);
  const promptOf = (c: TrackedCall) => promptIds(c);

  /** Replays an episode's recorded conversation through the chat route in a fresh episode and compares the tokens. */
  async function expectSameTokensAsChat(id: string): Promise<void> {
    const recorded = calls(id);
    const replay = episode();
    for (const c of recorded) {
      const res = await fetch(`${baseURL}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${replay.key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "main", messages: c.messages, ...(c.tools ? { tools: c.tools } : {}) }),
      });
      expect(res.status).toBe(200);
    }
    const chat = calls(replay.id);
    expect(chat.map(promptOf)).toEqual(recorded.map(promptOf));
    expect(chat.map((c) => c.outputIds)).toEqual(recorded.map((c) => c.outputIds));
  }

  function expectRecorded(id: string, count: number): void {
    const recorded = calls(id);
    expect(recorded).toHaveLength(count);
    for (const c of recorded) {
      expect(c.trainable).toBe(true);
      expect(c.outputIds.length).toBeGreaterThan(0);
      expect(c.outputLogprobs).toHaveLength(c.outputIds.length);
      expect(promptOf(c).length).toBeGreaterThan(0);
    }
  }

  it("AI SDK default provider: generateText with a tool, two steps", async () => {
    const ep = episode();
    const openai = createOpenAI({ apiKey: ep.key, baseURL });
    const result = await generateText({
      model: openai("main"),
      prompt: "What is 2 + 3?",
      tools: { add: tool({ description: "Adds", inputSchema: jsonSchema<{ a: number; b: number }>(ADD_PARAMS), execute: async ({ a, b }) => String(a + b) }) },
      stopWhen: stepCountIs(3),
    });
    expect(result.steps[0]!.toolCalls[0]).toMatchObject({ toolName: "add", input: { a: 2, b: 3 } });
    expect(result.text).toBe("The sum is 5.");
    expectRecorded(ep.id, 2);
    // The second call's context holds the first call's exact generated ids.
    const [c0, c1] = calls(ep.id);
    expect(promptOf(c1!).slice(0, promptOf(c0!).length + c0!.outputIds.length)).toEqual([...promptOf(c0!), ...c0!.outputIds]);
    await expectSameTokensAsChat(ep.id);
  });

  it("AI SDK default provider: streamText with a tool", async () => {
    const ep = episode();
    const openai = createOpenAI({ apiKey: ep.key, baseURL });
    const result = streamText({
      model: openai("main"),
      prompt: "What is 2 + 3?",
      tools: { add: tool({ description: "Adds", inputSchema: jsonSchema<{ a: number; b: number }>(ADD_PARAMS), execute: async ({ a, b }) => String(a + b) }) },
      stopWhen: stepCountIs(3),
    });
    let streamed = "";
    for await (const delta of result.textStream) streamed += delta;
    expect(streamed).toBe("The sum is 5.");
    expect((await result.steps)[0]!.toolCalls[0]).toMatchObject({ toolName: "add", input: { a: 2, b: 3 } });
    expectRecorded(ep.id, 2);
    await expectSameTokensAsChat(ep.id);
  });

  it("OpenAI Agents SDK: one agent with one tool", async () => {
    const ep = episode();
    const add = agentTool({
      name: "add",
      description: "Adds",
      parameters: z.object({ a: z.number(), b: z.number() }),
      execute: async ({ a, b }) => String(a + b),
    });
    const agent = new Agent({ name: "calculator", instructions: "You add numbers.", tools: [add], model: "main" });
    const runner = new Runner({ modelProvider: new OpenAIProvider({ apiKey: ep.key, baseURL, useResponses: true }), tracingDisabled: true });
    const result = await runner.run(agent, "What is 2 + 3?");
    expect(result.finalOutput).toBe("The sum is 5.");
    expectRecorded(ep.id, 2);
    await expectSameTokensAsChat(ep.id);
  });

  it("LangChain ChatOpenAI with useResponsesApi", async () => {
    const ep = episode();
    const model = new ChatOpenAI({ model: "main", apiKey: ep.key, configuration: { baseURL }, useResponsesApi: true, maxRetries: 0 });
    const withTools = model.bindTools([{ type: "function", function: { name: "add", description: "Adds", parameters: ADD_PARAMS } }]);
    const question = new HumanMessage("What is 2 + 3?");
    const first = await withTools.invoke([question]);
    expect(first.tool_calls?.[0]).toMatchObject({ name: "add", args: { a: 2, b: 3 } });
    const second = await withTools.invoke([question, first as AIMessage, new ToolMessage({ content: "5", tool_call_id: first.tool_calls![0]!.id! })]);
    expect(second.text).toBe("The sum is 5.");
    expectRecorded(ep.id, 2);
    await expectSameTokensAsChat(ep.id);
  });

  it("previous_response_id continues a stored conversation; a plain string input works", async () => {
    const ep = episode();
    const post = (body: unknown) =>
      fetch(`${baseURL}/responses`, { method: "POST", headers: { authorization: `Bearer ${ep.key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const r1 = (await (await post({ model: "main", input: "Hi" })).json()) as { id: string; output: Array<{ type: string; content?: Array<{ text: string }> }> };
    expect(r1.output[0]!.content![0]!.text).toBe("Hello from the policy.");
    const r2 = await post({ model: "main", input: "Again", previous_response_id: r1.id });
    expect(r2.status).toBe(200);
    const [c0, c1] = calls(ep.id);
    expect(c1!.messages).toEqual([
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello from the policy." },
      { role: "user", content: "Again" },
    ]);
    expect(promptOf(c1!).slice(0, promptOf(c0!).length + c0!.outputIds.length)).toEqual([...promptOf(c0!), ...c0!.outputIds]);
  });
});
