import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeMcpProject, type McpSession, openMcpProject, pollUntil, TINY_CONFIG } from "./mcp-helpers.ts";

const TOOLS = [
  "env_init", "env_test",
  "run_start", "run_status", "run_wait", "run_stop",
  "sweep_start", "sweep_status", "sweep_stop",
  "episodes_query", "episode_show", "failures_list",
  "report_read", "report_compare",
];

type Status = {
  state: string;
  step: number;
  steps: number | null;
  exitCode: number | null;
  lastStep: { step: number; perEnv: Record<string, { episodes: number }> } | null;
  latestEval: Array<{ env: string; mode: string; step: number }>;
};
type Page = { episodes: Array<{ episodeId: string; env: string; state: string; reward: number | null; calls: number }>; next: string | null; total: number | null };
type Shown = {
  episode: { episodeId: string; reward: number | null };
  calls: Array<{ messages: Array<{ role: string; content: string }>; outputText: string; promptTokens: number; outputTokens: number }>;
};

let mcp: McpSession;
let project: string;

beforeAll(async () => {
  ({ mcp, project } = await openMcpProject("mcp"));
});
afterAll(() => closeMcpProject(mcp, project));

describe("agentjet mcp (the SDK's client over stdio, the real CLI)", () => {
  it("lists every tool with typed input and output schemas", async () => {
    const { tools } = await mcp.client.listTools();
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
    expect(await mcp.fails("run_status", { run: "run-00000000" })).toBe("AJ_ERR_MCP_UNKNOWN_PROCESS");
    expect(await mcp.fails("episodes_query", { run: "no-such-run" })).toBe("AJ_ERR_MCP_NOT_A_RUN_DIR");
    expect(await mcp.fails("run_start", { example: "quickstart", config: "x.yaml" })).toBe("AJ_ERR_MCP_INVALID_ARGUMENTS");
    expect(await mcp.fails("run_start", { configObject: { run: { steps: "many" } } })).toBe("AJ_ERR_MCP_INVALID_CONFIG");
    expect(await mcp.fails("run_start", { example: "no-such-example" })).toBe("AJ_ERR_TRAIN_UNKNOWN_EXAMPLE");
    expect(await mcp.fails("env_init", { name: "Bad Name", dir: "bad" })).toBe("AJ_ERR_USAGE");
    // What the input schema refuses is answered by the SDK itself: still coded (register-tool.ts codeProtocolErrors).
    expect(await mcp.fails("env_init", { name: "x", kind: "wasm" })).toBe("AJ_ERR_MCP_INVALID_INPUT");
    expect(await mcp.fails("no_such_tool", {})).toBe("AJ_ERR_MCP_UNKNOWN_TOOL");
    expect(await mcp.fails("env_test", { target: "nothing-installed-by-this-name" })).toBe("AJ_ERR_STORE_NOT_INSTALLED");
  });

  it("scaffolds and tests an environment, trains a short run and reads it back, all through tool calls", { timeout: 240_000 }, async () => {
    const init = await mcp.ok<{ name: string; kind: string; dir: string; files: string[] }>("env_init", { name: "my-env", kind: "vm", dir: "envs/my-env" });
    expect(init).toMatchObject({ name: "my-env", kind: "vm", dir: join(project, "envs", "my-env") });
    expect(init.files).toContain("agentjet.env.json");
    expect(await mcp.fails("env_init", { name: "my-env", kind: "vm", dir: "envs/my-env" })).toBe("AJ_ERR_SCAFFOLD_DIR_NOT_EMPTY");

    const report = await mcp.ok<{ passed: boolean; checks: Array<{ name: string; status: string; detail: string }> }>("env_test", { target: "envs/my-env" });
    expect(report.passed).toBe(true);
    expect(report.checks.map((c) => c.name)).toEqual(["manifest", "open", "tasks", "reset-step", "solve", "malformed-action", "fuzz", "determinism", "crash-recovery"]);
    for (const c of report.checks) expect({ name: c.name, status: c.status, detail: c.detail.length > 0 }).toEqual({ name: c.name, status: "pass", detail: true });

    const started = await mcp.ok<{ id: string; runDir: string; pid: number; command: string[] }>("run_start", { configObject: TINY_CONFIG, runDir: "runs/tiny" });
    expect(started.id).toMatch(/^run-[0-9a-f]{8}$/);
    expect(started.runDir).toBe(join(project, "runs", "tiny"));
    expect(started.command).toEqual(expect.arrayContaining(["train", "--json", "--port", "0"]));
    // The same directory is taken while that run lives.
    expect(await mcp.fails("run_start", { configObject: TINY_CONFIG, runDir: "runs/tiny" })).toBe("AJ_ERR_MCP_PROCESS_ACTIVE");

    const status = await pollUntil(() => mcp.ok<Status & { timedOut: boolean }>("run_wait", { run: started.id, timeoutS: 20 }), (s) => !s.timedOut, 200_000, 0);
    expect(status, mcp.stderr().slice(-2000)).toMatchObject({ state: "done", exitCode: 0, step: 2, steps: 2 });
    expect(status.lastStep?.step).toBe(2);
    expect(status.lastStep?.perEnv["arith"]?.episodes).toBeGreaterThan(0);
    expect(status.latestEval).toEqual([expect.objectContaining({ env: "arith", mode: "greedy", step: 2 })]);
    // By directory too, as a later server finds it; and a finished run's directory is taken.
    expect((await mcp.ok<Status>("run_status", { run: "runs/tiny" })).state).toBe("done");
    expect(await mcp.fails("run_start", { configObject: TINY_CONFIG, runDir: "runs/tiny" })).toBe("AJ_ERR_TRAIN_RUN_DIR_IN_USE");

    const first = await mcp.ok<Page>("episodes_query", { run: started.id, env: "arith", state: "ended", eval: false, limit: 3 });
    expect(first.episodes).toHaveLength(3);
    expect(first.total).toBeGreaterThanOrEqual(16);
    expect(first.next).not.toBeNull();
    const second = await mcp.ok<Page>("episodes_query", { run: started.id, env: "arith", state: "ended", eval: false, limit: 3, cursor: first.next });
    expect(second.total).toBeNull();
    expect(second.episodes).toHaveLength(3);
    expect(second.episodes.map((e) => e.episodeId)).not.toContain(first.episodes[0]!.episodeId);
    expect(await mcp.fails("episodes_query", { run: started.id, cursor: "not-a-cursor" })).toBe("AJ_ERR_MCP_BAD_CURSOR");

    const listed = first.episodes[0]!;
    const shown = await mcp.ok<Shown>("episode_show", { run: started.id, episodeId: listed.episodeId });
    expect(shown.episode).toMatchObject({ episodeId: listed.episodeId, reward: listed.reward });
    expect(shown.calls).toHaveLength(listed.calls);
    const c = shown.calls[0]!;
    expect(c.messages.at(-1)).toMatchObject({ role: "user", content: expect.stringMatching(/\d/) });
    expect(c.promptTokens).toBeGreaterThan(0);
    expect(c.outputTokens).toBeGreaterThan(0);
    expect(typeof c.outputText).toBe("string");
    expect(await mcp.fails("episode_show", { run: started.id, episodeId: "nope" })).toBe("AJ_ERR_MCP_EPISODE_NOT_FOUND");

    const failures = await mcp.ok<{ counts: Record<string, number>; latest: unknown[] }>("failures_list", { run: started.id });
    // the latest failures leave out the scheduler's cancellations (the run's end cancels what it never ran)
    const failed = Object.entries(failures.counts).filter(([kind]) => kind !== "cancelled");
    expect(failures.latest.length).toBe(failed.reduce((a, [, n]) => a + n, 0));

    const summary = await mcp.ok<{ steps: number; skill: { headline: string[]; perEnv: Record<string, { greedy?: { last: number } }> }; files: string[] }>("report_read", { run: started.id });
    expect(summary.steps).toBe(2);
    expect(summary.skill.headline[0]).toMatch(/^arith: success greedy/);
    expect(summary.files).toContain(join(project, "runs", "tiny", "report.html"));

    // A second run, stopped cleanly after its first step; then the two side by side.
    const long = await mcp.ok<{ id: string }>("run_start", { configObject: { ...TINY_CONFIG, run: { ...TINY_CONFIG.run, steps: 200, checkpointEvery: 100 } }, runDir: "runs/long", warmStart: 0 });
    const live = await pollUntil(() => mcp.ok<Status>("run_status", { run: long.id }), (s) => s.step >= 1 || (s.state !== "starting" && s.state !== "running"), 200_000, 300);
    expect(live.state).toBe("running");
    const stopped = await mcp.ok<Status & { timedOut: boolean }>("run_stop", { run: long.id, timeoutS: 120 });
    expect(stopped).toMatchObject({ state: "interrupted", exitCode: 130, timedOut: false });
    expect(stopped.step).toBeLessThan(200);
    expect(await mcp.fails("run_stop", { run: long.id })).toBe("AJ_ERR_MCP_NOT_RUNNING");

    const compared = await mcp.ok<{ runs: Array<{ runDir: string; endReason: string | null; heldOut: Record<string, { greedy: number | null }> }>; best: Record<string, { runDir: string }> }>(
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
