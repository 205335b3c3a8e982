import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO, removeTempDirs, tempDir } from "../helpers.ts";

/** A tiny arith run: 10 warm-start steps, 2 RL steps of 4 groups of 4, 8 greedy eval tasks (seconds on a free core). */
const TINY_CONFIG = {
  run: { dir: "runs/tiny", seed: 1, steps: 2, checkpointEvery: 2 },
  policies: { main: { tokenizer: "embedded", engine: { kind: "embedded", model: { layers: 1, dim: 16, heads: 2, context: 64, seed: 1 } }, optimizer: { lr: 0.0003, epochs: 1 } } },
  environments: [{ name: "arith", split: "train", roles: { solver: "main" } }],
  warmStart: { source: "solver", split: "train", steps: 10, batch: 8, lr: 0.003, logEvery: 5 },
  sampling: { temperature: 1, maxTokens: 3 },
  batching: { strategy: "tasks", batchTasks: 4, groupSize: 4 },
  clients: { local: 1, concurrency: 16 },
  eval: { every: 2, split: "test", tasks: 8, modes: ["greedy"] },
};

const TOOLS = [
  "env_init", "env_test",
  "run_start", "run_status", "run_wait", "run_stop",
  "sweep_start", "sweep_status", "sweep_stop",
  "episodes_query", "episode_show", "failures_list",
  "report_read", "report_compare",
];

interface Envelope<T> {
  ok: boolean;
  result?: T;
  error?: { code: string; message: string; details?: unknown };
}

let client: Client;
let project: string;
let stderr = "";

async function call<T = Record<string, unknown>>(name: string, args: Record<string, unknown>): Promise<{ raw: CallToolResult; env: Envelope<T> }> {
  const raw = (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult;
  return { raw, env: raw.structuredContent as unknown as Envelope<T> };
}

async function ok<T = Record<string, unknown>>(name: string, args: Record<string, unknown>): Promise<T> {
  const { raw, env } = await call<T>(name, args);
  expect(raw.isError, `${name}: ${JSON.stringify(env.error)}\n${stderr.slice(-2000)}`).toBeFalsy();
  expect(env.ok).toBe(true);
  return env.result!;
}

async function fails(name: string, args: Record<string, unknown>): Promise<string> {
  const { raw, env } = await call(name, args);
  expect(raw.isError).toBe(true);
  expect(env.ok).toBe(false);
  return env.error!.code;
}

beforeAll(async () => {
  project = tempDir("mcp");
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(REPO, "bin", "agentjet.js"), "mcp", "--project", project],
    cwd: project,
    stderr: "pipe",
  });
  transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  client = new Client({ name: "agentjet-test", version: "0.0.0" });
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close();
  removeTempDirs();
});

describe("agentjet mcp (the SDK's client over stdio, the real CLI)", () => {
  it("lists every tool with typed input and output schemas", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
    for (const t of tools) {
      expect(t.inputSchema.type, t.name).toBe("object");
      expect(t.outputSchema?.type, t.name).toBe("object");
      expect(Object.keys(t.outputSchema?.properties ?? {}).sort(), t.name).toEqual(["error", "ok", "result"]);
      expect(t.description?.length, t.name).toBeGreaterThan(40);
    }
    const start = tools.find((t) => t.name === "run_start")!;
    expect(Object.keys(start.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["config", "configObject", "example", "resume", "runDir", "steps"]));
    const status = tools.find((t) => t.name === "run_status")!;
    const result = (status.outputSchema!.properties as Record<string, { properties?: Record<string, unknown> }>)["result"]!;
    expect(Object.keys(result.properties ?? {})).toEqual(expect.arrayContaining(["state", "step", "lastStep", "latestEval"]));
  });

  it("answers errors with isError and their AJ_ERR_* code as structured content", async () => {
    expect(await fails("run_status", { run: "run-00000000" })).toBe("AJ_ERR_MCP_UNKNOWN_PROCESS");
    expect(await fails("episodes_query", { run: "no-such-run" })).toBe("AJ_ERR_MCP_NOT_A_RUN_DIR");
    expect(await fails("run_start", { example: "quickstart", config: "x.yaml" })).toBe("AJ_ERR_MCP_INVALID_ARGUMENTS");
    expect(await fails("run_start", { configObject: { run: { steps: "many" } } })).toBe("AJ_ERR_MCP_INVALID_CONFIG");
    expect(await fails("env_init", { name: "Bad Name", dir: "bad" })).toBe("AJ_ERR_USAGE");
    // Arguments the input schema refuses are answered by the SDK: still coded (register-tool.ts codeProtocolErrors).
    expect(await fails("env_init", { name: "x", kind: "wasm" })).toBe("AJ_ERR_MCP_INVALID_INPUT");
    expect(await fails("env_test", { target: "nothing-installed-by-this-name" })).toBe("AJ_ERR_NOT_INSTALLED");
  });

  it("scaffolds and tests an environment, trains a short run and reads it back, all through tool calls", { timeout: 240_000 }, async () => {
    const init = await ok<{ name: string; kind: string; dir: string; files: string[] }>("env_init", { name: "my-env", kind: "vm", dir: "envs/my-env" });
    expect(init).toMatchObject({ name: "my-env", kind: "vm", dir: join(project, "envs", "my-env") });
    expect(init.files).toContain("agentjet.env.json");
    expect(await fails("env_init", { name: "my-env", kind: "vm", dir: "envs/my-env" })).toBe("AJ_ERR_SCAFFOLD_DIR_NOT_EMPTY");

    const report = await ok<{ passed: boolean; checks: Array<{ name: string; status: string; detail: string }> }>("env_test", { target: "envs/my-env" });
    expect(report.passed).toBe(true);
    expect(report.checks.map((c) => c.name)).toEqual(["manifest", "open", "tasks", "reset-step", "solve", "malformed-action", "fuzz", "determinism", "crash-recovery"]);
    for (const c of report.checks) expect({ name: c.name, status: c.status }).toEqual({ name: c.name, status: "pass" });

    const started = await ok<{ id: string; runDir: string; pid: number; command: string[] }>("run_start", { configObject: TINY_CONFIG, runDir: "runs/tiny" });
    expect(started.id).toMatch(/^run-[0-9a-f]{8}$/);
    expect(started.runDir).toBe(join(project, "runs", "tiny"));
    expect(started.command).toEqual(expect.arrayContaining(["train", "--json", "--port", "0"]));
    // The same directory is taken while that run lives.
    expect(await fails("run_start", { configObject: TINY_CONFIG, runDir: "runs/tiny" })).toBe("AJ_ERR_MCP_PROCESS_ACTIVE");

    type Status = { state: string; step: number; steps: number | null; exitCode: number | null; lastStep: { step: number; perEnv: Record<string, { episodes: number }> } | null; latestEval: Array<{ env: string; mode: string; step: number }> };
    let status = await ok<Status>("run_status", { run: started.id });
    const deadline = Date.now() + 200_000;
    while ((status.state === "starting" || status.state === "running") && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 500));
      status = await ok<Status>("run_status", { run: started.id });
    }
    expect(status, stderr.slice(-2000)).toMatchObject({ state: "done", exitCode: 0, step: 2, steps: 2 });
    expect(status.lastStep?.step).toBe(2);
    expect(status.lastStep?.perEnv["arith"]?.episodes).toBeGreaterThan(0);
    expect(status.latestEval).toEqual([expect.objectContaining({ env: "arith", mode: "greedy", step: 2 })]);
    // By directory too, as a later server would find it.
    expect((await ok<Status>("run_status", { run: "runs/tiny" })).state).toBe("done");

    type Page = { episodes: Array<{ episodeId: string; env: string; state: string; reward: number | null; calls: number }>; next: string | null; total: number | null };
    const first = await ok<Page>("episodes_query", { run: started.id, env: "arith", state: "ended", eval: false, limit: 3 });
    expect(first.episodes).toHaveLength(3);
    expect(first.total).toBeGreaterThanOrEqual(16);
    expect(first.next).not.toBeNull();
    const second = await ok<Page>("episodes_query", { run: started.id, env: "arith", state: "ended", eval: false, limit: 3, cursor: first.next });
    expect(second.total).toBeNull();
    expect(second.episodes.map((e) => e.episodeId)).not.toContain(first.episodes[0]!.episodeId);
    expect(await fails("episodes_query", { run: started.id, cursor: "not-a-cursor" })).toBe("AJ_ERR_MCP_BAD_CURSOR");

    const shown = first.episodes[0]!;
    const episode = await ok<{ episode: { episodeId: string; reward: number | null; rewards: Record<string, number> }; calls: Array<{ messages: Array<{ role: string; content: string }>; outputText: string; promptTokens: number; outputTokens: number; version: number }> }>(
      "episode_show",
      { run: started.id, episodeId: shown.episodeId },
    );
    expect(episode.episode.episodeId).toBe(shown.episodeId);
    expect(episode.episode.reward).toBe(shown.reward);
    expect(episode.calls.length).toBe(shown.calls);
    const c = episode.calls[0]!;
    expect(c.messages.at(-1)).toMatchObject({ role: "user" });
    expect(c.messages.at(-1)!.content).toMatch(/\d/);
    expect(c.promptTokens).toBeGreaterThan(0);
    expect(c.outputTokens).toBeGreaterThan(0);
    expect(typeof c.outputText).toBe("string");
    expect(await fails("episode_show", { run: started.id, episodeId: "nope" })).toBe("AJ_ERR_MCP_EPISODE_NOT_FOUND");

    const failures = await ok<{ counts: Record<string, number>; latest: unknown[] }>("failures_list", { run: started.id });
    expect(failures.latest.length).toBe(Object.values(failures.counts).reduce((a, b) => a + b, 0));

    const summary = await ok<{ steps: number; skill: { headline: string[]; perEnv: Record<string, { greedy?: { last: number } }> }; files: string[] }>("report_read", { run: started.id });
    expect(summary.steps).toBe(2);
    expect(summary.skill.headline[0]).toMatch(/^arith: success greedy/);
    expect(summary.files).toContain(join(project, "runs", "tiny", "report.html"));

    // A second run, stopped cleanly after its first step; then the two side by side.
    const long = await ok<{ id: string }>("run_start", { configObject: { ...TINY_CONFIG, run: { ...TINY_CONFIG.run, steps: 200, checkpointEvery: 100 } }, runDir: "runs/long", warmStart: 0 });
    let live = await ok<Status>("run_status", { run: long.id });
    while (live.step < 1 && (live.state === "starting" || live.state === "running") && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 300));
      live = await ok<Status>("run_status", { run: long.id });
    }
    expect(live.state).toBe("running");
    const stopped = await ok<Status & { timedOut: boolean }>("run_stop", { run: long.id, timeoutS: 120 });
    expect(stopped).toMatchObject({ state: "interrupted", exitCode: 130, timedOut: false });
    expect(stopped.step).toBeLessThan(200);
    expect(await fails("run_stop", { run: long.id })).toBe("AJ_ERR_MCP_NOT_RUNNING");

    const compared = await ok<{ runs: Array<{ runDir: string; steps: number; endReason: string | null; heldOut: Record<string, { greedy: number | null }> }>; best: Record<string, { runDir: string }> }>(
      "report_compare",
      { runs: [started.id, "runs/long"] },
    );
    expect(compared.runs.map((r) => [r.runDir, r.endReason])).toEqual([
      [join(project, "runs", "tiny"), "done"],
      [join(project, "runs", "long"), "interrupted"],
    ]);
    expect(compared.runs[0]!.heldOut["arith"]!.greedy).toBe(summary.skill.perEnv["arith"]!.greedy!.last);
    expect(compared.best["arith"]).toBeDefined();
  });
});
