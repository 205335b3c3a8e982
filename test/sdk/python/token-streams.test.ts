import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promptIds } from "../../../server/tokenizers/prompt-ids.ts";
import type { CallRecord } from "../../../server/tracker/call-record.ts";
import { probePython, PY_SDK, PYTHON_REQUIRED, REPO, runPython } from "./run-python.ts";

const python = probePython();
const FIXTURE = join(import.meta.dirname, "fixtures", "conversation.json");
const script = JSON.parse(readFileSync(FIXTURE, "utf8")) as { system: string; users: string[]; maxTokens: number };
const ADMIN = "token-streams-admin-0123";
const CLIENT = "token-streams-client-0123";

let dir: string;
let child: ChildProcess;
let url: string;

/** A real `agentjet serve --config` (one tiny embedded policy, greedy) on a free port, rolling. */
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "agentjet-token-streams-"));
  const config = {
    policies: { main: { tokenizer: "embedded", engine: { kind: "embedded", model: { layers: 1, dim: 16, heads: 2, context: 256, seed: 3 } } } },
    environments: [{ name: "arith", roles: { solver: "main" } }],
    run: { dir: join(dir, "run"), steps: 1000 },
  };
  writeFileSync(join(dir, "config.yaml"), JSON.stringify(config));
  child = spawn(process.execPath, [join(REPO, "bin", "agentjet.js"), "serve", "--config", join(dir, "config.yaml"), "--port", "0"], {
    cwd: dir,
    env: { ...process.env, AGENTJET_CHILD: "", AGENTJET_ADMIN_TOKEN: ADMIN, AGENTJET_CLIENT_TOKEN: CLIENT },
    stdio: ["ignore", "pipe", "inherit"],
  });
  url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on("exit", (code) => reject(new Error(`agentjet serve exited ${code}:\n${out}`)));
  });
  for (;;) {
    const status = (await (await fetch(`${url}/v1/engine/status`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as { state: string };
    if (status.state === "rolling") break;
    await new Promise((r) => setTimeout(r, 200));
  }
}, 120_000);
afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

async function call(method: string, path: string, token: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(res.status, path).toBeLessThan(300);
  return (await res.json()) as Record<string, unknown>;
}

/** The same conversation from TypeScript: a client-driven episode, the `openai` npm client on its key. */
async function playInTypeScript(): Promise<string> {
  const begun = (await call("POST", "/v1/episodes/begin", CLIENT, { taskId: "conversation", env: "token-streams" })) as { episode: { episodeId: string }; baseUrl: string; keys: Record<string, string> };
  const client = new OpenAI({ baseURL: begun.baseUrl, apiKey: begun.keys.main!, maxRetries: 0 });
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "system", content: script.system }];
  for (const user of script.users) {
    messages.push({ role: "user", content: user });
    const reply = await client.chat.completions.create({ model: "policy", messages, temperature: 0, max_tokens: script.maxTokens });
    messages.push({ role: "assistant", content: reply.choices[0]!.message.content ?? "" });
  }
  await call("POST", `/v1/episodes/${begun.episode.episodeId}/end`, CLIENT, { rewards: { main: 1 } });
  return begun.episode.episodeId;
}

async function streams(episodeId: string): Promise<Array<{ tokens: number[]; outputIds: number[]; logprobs: number[]; text: string }>> {
  const { calls } = (await call("GET", `/v1/episodes/${episodeId}/calls`, ADMIN)) as { calls: CallRecord[] };
  return calls.map((c) => ({ tokens: [...promptIds(c), ...c.outputIds], outputIds: c.outputIds, logprobs: c.outputLogprobs, text: c.outputText }));
}

describe.skipIf(!python.ok && !PYTHON_REQUIRED)("Python and TypeScript clients", () => {
  it("record identical token streams for the same conversation", async () => {
    if (!python.ok) throw new Error(`needs Python 3.9+: ${python.why}`);
    const r = await runPython([join(PY_SDK, "tests", "conversation.py"), url, CLIENT, FIXTURE]);
    expect(r.code, r.output).toBe(0);
    const pythonEpisode = (JSON.parse(r.output.trim().split("\n").at(-1)!) as { episode: string }).episode;
    const tsEpisode = await playInTypeScript();
    const fromPython = await streams(pythonEpisode);
    const fromTypeScript = await streams(tsEpisode);
    expect(fromPython).toHaveLength(script.users.length);
    for (const s of fromPython) expect(s.outputIds.length).toBeGreaterThan(0);
    expect(fromPython).toEqual(fromTypeScript);
  });
});
