import { join } from "node:path";
import Database from "better-sqlite3";
import OpenAI, { AuthenticationError, BadRequestError, ConflictError } from "openai";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimSolver, listenScripted, type ScriptedServer } from "../helpers/build-test-server.ts";
import { embeddedTokenizer as tok } from "../helpers/scripted-engine.ts";
import { type CallRow, fromCallRows } from "../../../server/tracker/index.ts";

const TOOLS: ChatCompletionTool[] = [
  { type: "function", function: { name: "add", description: "Adds two numbers", parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } } } },
];

const REPLIES = [
  'I will add.<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call><|im_end|>',
  '<tool_call>{"name": "add", "arguments": {"a": 5, "b": 5}}</tool_call><|im_end|>',
  "The answer is 10.<|im_end|>",
  "You are welcome.<|im_end|>",
];

describe("the official openai client against a real socket", () => {
  let server: ScriptedServer;

  beforeAll(async () => {
    server = await listenScripted(REPLIES);
  });

  afterAll(() => server.close());

  function claimKey(episodeId: string): string {
    return claimSolver(server.app, episodeId, "t");
  }

  it("runs a multi-turn episode with tool calls, streaming and not, and records every call", async () => {
    const client = new OpenAI({ apiKey: claimKey("ep-client"), baseURL: server.baseUrl, maxRetries: 0 });
    const messages: ChatCompletionMessageParam[] = [
      { role: "system", content: "You are a calculator." },
      { role: "user", content: "2+3, then double it?" },
    ];

    // Turn 1: non-streaming, a tool call.
    const r1 = await client.chat.completions.create({ model: "main", messages, tools: TOOLS, logprobs: true });
    expect(r1.choices[0]!.finish_reason).toBe("tool_calls");
    const call1 = r1.choices[0]!.message.tool_calls![0]!;
    expect(call1.type === "function" && call1.function).toEqual({ name: "add", arguments: '{"a": 2, "b": 3}' });
    expect(r1.choices[0]!.logprobs!.content!.length).toBeGreaterThan(0);
    messages.push(r1.choices[0]!.message, { role: "tool", tool_call_id: call1.id, content: "5" });

    // Turn 2: streaming, a tool call assembled from deltas.
    const stream = await client.chat.completions.create({ model: "main", messages, tools: TOOLS, stream: true, stream_options: { include_usage: true } });
    let usage: OpenAI.CompletionUsage | null | undefined;
    const toolDeltas: Array<{ id: string | undefined; name: string | undefined; arguments: string; chunks: number }> = [];
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      for (const d of choice.delta.tool_calls ?? []) {
        const seen = toolDeltas[d.index];
        toolDeltas[d.index] = {
          id: d.id ?? seen?.id,
          name: d.function?.name ?? seen?.name,
          arguments: (seen?.arguments ?? "") + (d.function?.arguments ?? ""),
          chunks: (seen?.chunks ?? 0) + 1,
        };
      }
      finish = choice.finish_reason ?? finish;
    }
    expect(finish).toBe("tool_calls");
    expect(usage!.completion_tokens).toBeGreaterThan(0);
    const call2 = toolDeltas[0]!;
    expect(call2).toMatchObject({ id: expect.stringMatching(/^call_/), name: "add", arguments: '{"a": 5, "b": 5}' });
    // the arguments came as the model wrote them, not in one piece at the end
    expect(call2.chunks).toBeGreaterThan(2);
    messages.push(
      { role: "assistant", content: null, tool_calls: [{ id: call2.id!, type: "function", function: { name: call2.name!, arguments: call2.arguments! } }] },
      { role: "tool", tool_call_id: call2.id!, content: "10" },
    );

    // Turn 3: streaming text.
    const s3 = await client.chat.completions.create({ model: "main", messages, tools: TOOLS, stream: true });
    let text3 = "";
    for await (const chunk of s3) text3 += chunk.choices[0]?.delta.content ?? "";
    expect(text3).toBe("The answer is 10.");
    messages.push({ role: "assistant", content: text3 }, { role: "user", content: "Thanks" });

    // Turn 4: non-streaming text, array content parts.
    const r4 = await client.chat.completions.create({ model: "main", messages: [...messages.slice(0, -1), { role: "user", content: [{ type: "text", text: "Thanks" }] }], tools: TOOLS });
    expect(r4.choices[0]!.message.content).toBe("You are welcome.");

    // Claimed in-process, as the scheduler claims: over HTTP only the admin token may end it.
    const end = await fetch(`${server.baseUrl}/episodes/ep-client/end`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${server.app.agentjet.auth.adminToken}` },
      body: JSON.stringify({ rewards: { solver: 1 } }),
    });
    expect(end.status).toBe(200);

    const db = new Database(join(server.runDir, "run.db"), { readonly: true });
    // read back as the product reads run.db: a row leaves out what repeats its agent's previous call
    const rows = fromCallRows(db.prepare("SELECT * FROM calls WHERE episode_id = ? ORDER BY agent_id, seq").all("ep-client") as CallRow[]);
    db.close();
    expect(rows.map((r) => r.seq)).toEqual([0, 1, 2, 3]);
    for (const [i, r] of rows.entries()) {
      expect(r.outputIds).toEqual(tok.encode(REPLIES[i]!));
      expect(r.outputLogprobs).toHaveLength(r.outputIds.length);
      expect(r.outputLogprobs.every((x) => x < 0)).toBe(true);
      expect(r.segments.length).toBe(r.messages.length);
    }
    // Each call's prompt starts with the previous call's prompt and its exact generated ids.
    const prompts = rows.map((r) => [...r.segments.flatMap((s) => [...s.ids]), ...r.headerIds]);
    for (let i = 1; i < rows.length; i++) {
      const prefix = [...prompts[i - 1]!, ...rows[i - 1]!.outputIds];
      expect(prompts[i]!.slice(0, prefix.length)).toEqual(prefix);
    }
  });

  it("raises the client's own error classes", async () => {
    const forged = new OpenAI({ apiKey: "sk-aj-forged.x", baseURL: server.baseUrl, maxRetries: 0 });
    await expect(forged.chat.completions.create({ model: "main", messages: [{ role: "user", content: "x" }] })).rejects.toBeInstanceOf(AuthenticationError);

    const client = new OpenAI({ apiKey: claimKey("ep-errors"), baseURL: server.baseUrl, maxRetries: 0 });
    const bad = client.chat.completions.create({ model: "main", messages: [{ role: "user", content: "x" }], temperature: 9 });
    await expect(bad).rejects.toBeInstanceOf(BadRequestError);
    await expect(bad).rejects.toMatchObject({ status: 400, code: "AJ_ERR_INVALID_REQUEST", param: "temperature" });

    server.app.agentjet.store.abort("ep-errors", { kind: "client_lost", message: "test" });
    await expect(client.chat.completions.create({ model: "main", messages: [{ role: "user", content: "x" }] })).rejects.toBeInstanceOf(ConflictError);
  });

  it("lists models", async () => {
    const client = new OpenAI({ apiKey: "unused", baseURL: server.baseUrl, maxRetries: 0 });
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(["main"]);
  });

  it("one keep-alive connection carrying several agents' keys: each call is authorized and recorded by its own key", async () => {
    const { Agent, request } = await import("node:http");
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const url = new URL(`${server.baseUrl}/chat/completions`);
    const post = (key: string) =>
      new Promise<{ status: number; socket: unknown }>((resolve, reject) => {
        const body = JSON.stringify({ model: "main", messages: [{ role: "user", content: "hi" }] });
        const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: "POST", agent, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } }, (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode!, socket: req.socket }));
        });
        req.on("error", reject);
        req.end(body);
      });
    try {
      const [a, b] = [claimKey("ep-keys-a"), claimKey("ep-keys-b")];
      const results = [];
      for (const key of [a, b, a, "sk-aj-forged.sig", b]) results.push(await post(key));
      // all over the same connection
      expect(new Set(results.map((r) => r.socket)).size).toBe(1);
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 401, 200]);
      expect(server.app.agentjet.store.tracker.callsOf("ep-keys-a")).toHaveLength(2);
      expect(server.app.agentjet.store.tracker.callsOf("ep-keys-b")).toHaveLength(2);
    } finally {
      agent.destroy();
    }
  });
});
