import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildServer } from "../../../server/app/build-server.ts";
import { closeServer } from "../../../server/app/close-server.ts";
import { RunConfigSchema } from "../../../server/config/run-config.ts";
import type { CallRecord } from "../../../server/tracker/call-record.ts";
import { probePython, PY_SDK, PYTHON_REQUIRED, runPython } from "./run-python.ts";

const python = probePython();
const FIXTURE = join(import.meta.dirname, "fixtures", "conversation.json");
const script = JSON.parse(readFileSync(FIXTURE, "utf8")) as { system: string; users: string[]; maxTokens: number };

const ADMIN = "token-streams-admin-0123";
const CLIENT = "token-streams-client-0123";

let app: FastifyInstance;
let url: string;

beforeAll(async () => {
  const config = RunConfigSchema.parse({
    policies: { main: { tokenizer: "embedded", engine: { kind: "embedded", model: { layers: 1, dim: 16, heads: 2, context: 256, seed: 3 } } } },
    environments: [{ name: "arith", roles: { solver: "main" } }],
  });
  app = await buildServer({ config, dbPath: ":memory:", keySecret: "token-streams", auth: { adminToken: ADMIN, clientTokens: [CLIENT] } });
  url = await app.listen({ host: "127.0.0.1", port: 0 });
});
afterAll(async () => {
  await closeServer(app);
});

async function post(path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${CLIENT}` }, body: JSON.stringify(body) });
  expect(res.status, path).toBeLessThan(300);
  return (await res.json()) as Record<string, unknown>;
}

/** The same conversation from TypeScript: a client-driven episode, the `openai` npm client on its key. */
async function playInTypeScript(): Promise<string> {
  const { episode } = (await post("/v1/episodes", { taskId: "conversation", env: "token-streams", agents: { main: { kind: "policy", target: "main" } } })) as { episode: { episodeId: string } };
  const claim = (await post("/v1/episodes/claim", { episodeId: episode.episodeId })) as { keys: Record<string, string> };
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: claim.keys.main!, maxRetries: 0 });
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "system", content: script.system }];
  for (const user of script.users) {
    messages.push({ role: "user", content: user });
    const reply = await client.chat.completions.create({ model: "policy", messages, temperature: 0, max_tokens: script.maxTokens });
    messages.push({ role: "assistant", content: reply.choices[0]!.message.content ?? "" });
  }
  await post(`/v1/episodes/${episode.episodeId}/end`, { rewards: { main: 1 } });
  return episode.episodeId;
}

function streams(episodeId: string): Array<{ tokens: number[]; outputIds: number[]; logprobs: number[]; text: string }> {
  const calls: CallRecord[] = app.agentjet.store.tracker.callsOf(episodeId);
  return calls.map((c) => ({ tokens: [...c.segments.flatMap((s) => s.ids), ...c.headerIds, ...c.outputIds], outputIds: c.outputIds, logprobs: c.outputLogprobs, text: c.outputText }));
}

describe.skipIf(!python.ok && !PYTHON_REQUIRED)("Python and TypeScript clients", () => {
  it("record identical token streams for the same conversation", async () => {
    if (!python.ok) throw new Error(`needs Python 3.9+: ${python.why}`);
    const r = await runPython([join(PY_SDK, "tests", "conversation.py"), url, CLIENT, FIXTURE]);
    expect(r.code, r.output).toBe(0);
    const pythonEpisode = (JSON.parse(r.output.trim().split("\n").at(-1)!) as { episode: string }).episode;
    const tsEpisode = await playInTypeScript();
    const fromPython = streams(pythonEpisode);
    const fromTypeScript = streams(tsEpisode);
    expect(fromPython).toHaveLength(script.users.length);
    for (const s of fromPython) expect(s.outputIds.length).toBeGreaterThan(0);
    expect(fromPython).toEqual(fromTypeScript);
  });
});
