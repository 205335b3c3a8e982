import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO } from "../helpers.ts";
import { closeMcpProject, type McpSession, openMcpProject, pollUntil, TINY_CONFIG } from "./mcp-helpers.ts";

const HAS_SWEEP = existsSync(join(REPO, "hub", "cli", "commands", "sweep.ts"));

type SweepStatus = {
  state: string;
  exitCode: number | null;
  counts: Record<string, number>;
  runs: Array<{ id: string; status: string; runDir: string }>;
  summary: unknown;
  report: string | null;
};

let mcp: McpSession;
let project: string;

beforeAll(async () => {
  ({ mcp, project } = await openMcpProject("mcp-sweep"));
});
afterAll(() => closeMcpProject(mcp, project));

describe.skipIf(!HAS_SWEEP)("agentjet mcp: sweeps (agentjet sweep as a child)", () => {
  it("runs a two-run sweep to its summary, and stops another cleanly", { timeout: 240_000 }, async () => {
    const sweep = (steps: number) => ({ name: "tiny", config: { ...TINY_CONFIG, run: { ...TINY_CONFIG.run, steps } }, search: "grid", parameters: { "policies.main.optimizer.lr": [0.0001, 0.0003] }, seeds: [1], parallel: 2 });
    writeFileSync(join(project, "sweep.yaml"), stringify(sweep(2)));
    writeFileSync(join(project, "long.yaml"), stringify({ ...sweep(300), parameters: { "policies.main.optimizer.lr": [0.0003] } }));

    expect(await mcp.fails("sweep_start", { sweepFile: "sweep.yaml" })).toBe("AJ_ERR_MCP_INVALID_ARGUMENTS");
    const started = await mcp.ok<{ id: string; campaignDir: string }>("sweep_start", { sweepFile: "sweep.yaml", campaignDir: "sweeps/tiny" });
    expect(started.id).toMatch(/^sweep-[0-9a-f]{8}$/);
    const done = await pollUntil(() => mcp.ok<SweepStatus>("sweep_status", { sweep: started.id }), (s) => s.state !== "running", 200_000);
    expect(done, mcp.stderr().slice(-2000)).toMatchObject({ state: "done", exitCode: 0, counts: { done: 2 } });
    expect(done.runs.map((r) => r.status)).toEqual(["done", "done"]);
    expect(done.summary).not.toBeNull();
    expect(done.report).toBe(join(project, "sweeps", "tiny", "report.html"));
    // Each run of the campaign is a run directory the run tools read.
    expect((await mcp.ok<{ state: string }>("run_status", { run: done.runs[0]!.runDir })).state).toBe("done");

    const long = await mcp.ok<{ id: string }>("sweep_start", { sweepFile: "long.yaml", campaignDir: "sweeps/long" });
    const running = await pollUntil(() => mcp.ok<SweepStatus>("sweep_status", { sweep: long.id }), (s) => s.state !== "running" || s.runs.some((r) => r.status === "running"), 120_000, 300);
    expect(running.state).toBe("running");
    const stopped = await mcp.ok<SweepStatus & { timedOut: boolean }>("sweep_stop", { sweep: long.id, timeoutS: 120 });
    expect(stopped).toMatchObject({ state: "interrupted", exitCode: 130, timedOut: false });
    expect(stopped.runs.map((r) => r.status)).toEqual(["interrupted"]);
  });
});
