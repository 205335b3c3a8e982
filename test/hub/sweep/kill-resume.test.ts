import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Campaign, CampaignSchema } from "../../../hub/sweep/campaign.ts";
import { type SweepEvent, SweepEventSchema, SweepSummarySchema } from "../../../hub/sweep/events.ts";
import { readLatestCheckpoint } from "../../../hub/train/checkpoint.ts";
import { REPO, removeTempDirs, tempDir } from "../helpers.ts";
import { readEvents, tinyArithYaml } from "../train/helpers.ts";

afterAll(removeTempDirs);

const STEPS = 3;
// Tiny and fast: a 20-step warm-start, 3 RL steps of 3 groups of 3, 8 held-out tasks, a checkpoint every step.
const BASE = tinyArithYaml({
  run: `{ dir: runs/unused, seed: 1, steps: ${STEPS}, checkpointEvery: 1 }`,
  modelSeed: 1,
  lr: 0.0003,
  batchTasks: 3,
  groupSize: 3,
  rest: `warmStart: { source: solver, split: train, steps: 20, batch: 8, tasks: 200, logEvery: 10 }
clients: { local: 1, concurrency: 8 }
eval: { every: ${STEPS}, split: test, tasks: 8, modes: [greedy, sampled] }
`,
});
const SWEEP = `name: e2e
base: base.yaml
parameters:
  policies.main.optimizer.lr: [0.0003, 0.003]
seeds: [1, 2]
parallel: 2
`;

interface Sweep {
  child: ChildProcess;
  events: SweepEvent[];
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: string | null }>;
}

/** `node bin/agentjet.js sweep ...` in its own process group (so the test can kill the sweep and its wrapper together). */
function startSweep(args: string[], cwd: string): Sweep {
  const child = spawn(process.execPath, [join(REPO, "bin", "agentjet.js"), "sweep", ...args], {
    cwd,
    env: { ...process.env, AGENTJET_CHILD: "" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const events: SweepEvent[] = [];
  let out = "";
  let err = "";
  child.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
    const lines = out.split("\n");
    out = lines.pop()!;
    for (const line of lines) events.push(SweepEventSchema.parse(JSON.parse(line)));
  });
  child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  return { child, events, stderr: () => err, exited };
}

async function until<T>(what: string, f: () => T | undefined | false, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = f();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const readCampaignFile = (dir: string): Campaign => CampaignSchema.parse(JSON.parse(readFileSync(join(dir, "campaign.json"), "utf8")));
const hasCheckpoint = (runDir: string): boolean => {
  try {
    return readLatestCheckpoint(runDir).kind === "ok";
  } catch {
    return false;
  }
};
/** A checkpoint before the run's last step: the run cannot be done by the time the kill lands. */
const midwayCheckpoint = (runDir: string): boolean => {
  const c = readLatestCheckpoint(runDir);
  return c.kind === "ok" && c.state.step < STEPS;
};

/** Processes whose command line names `dir` (a run left behind would). */
function processesNaming(dir: string): number[] {
  if (!existsSync("/proc")) return [];
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(dir);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe("agentjet sweep: a 2x2 sweep killed with SIGKILL midway, then --resume", () => {
  it("ends with every run done exactly once, the done ones never rerun, the running ones continued, and a report of all four", { timeout: 300_000 }, async () => {
    const project = tempDir("sweep-kill");
    writeFileSync(join(project, "base.yaml"), BASE);
    writeFileSync(join(project, "sweep.yaml"), SWEEP);
    const camp = join(project, "camp");

    const first = startSweep(["sweep.yaml", "--campaign-dir", camp, "--json"], project);
    // After a run has ended, while another runs and has written a checkpoint: kill -9 the sweep (its process group).
    await until("the first run-end", () => first.events.some((e) => e.event === "run-end"), 180_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${first.stderr()}`);
    });
    await until(
      "a running run with a checkpoint",
      () => readCampaignFile(camp).runs.some((r) => r.status === "running" && midwayCheckpoint(join(camp, r.runDir))),
      120_000,
    );
    process.kill(-first.child.pid!, "SIGKILL");
    expect((await first.exited).signal).toBe("SIGKILL");
    expect(first.events.filter((e) => e.event === "run-end").every((e) => e.event === "run-end" && e.status === "done")).toBe(true);

    const atKill = readCampaignFile(camp);
    const doneAtKill = atKill.runs.filter((r) => r.status === "done").map((r) => r.id);
    const runningAtKill = atKill.runs.filter((r) => r.status === "running");
    const checkpointed = runningAtKill.filter((r) => hasCheckpoint(join(camp, r.runDir))).map((r) => r.id);
    expect(doneAtKill.length).toBeGreaterThanOrEqual(1);
    expect(checkpointed.length).toBeGreaterThanOrEqual(1);

    const second = startSweep(["--resume", camp, "--json"], project);
    const { code } = await second.exited;
    expect(code, second.stderr()).toBe(0);
    const starts = second.events.flatMap((e) => (e.event === "run-start" ? [e] : []));
    // Done runs are kept; checkpointed ones continue from their checkpoint.
    for (const id of doneAtKill) expect(starts.map((s) => s.id)).not.toContain(id);
    for (const id of checkpointed) expect(starts.find((s) => s.id === id)?.mode, id).toBe("resume");
    expect(second.events.find((e) => e.event === "sweep-start")).toMatchObject({ event: "sweep-start", runs: 4, toRun: 4 - doneAtKill.length, resumed: true });

    const campaign = readCampaignFile(camp);
    const ids = campaign.runs.map((r) => r.id);
    expect(new Set(ids).size).toBe(4);
    expect(campaign.ownerPid).toBeNull();
    for (const r of campaign.runs) {
      expect(r, r.id).toMatchObject({ status: "done", exitCode: 0 });
      expect(r.pid).toBeUndefined();
      if (doneAtKill.includes(r.id)) expect(r.starts, r.id).toBe(1);
      // Every run trained each step once, whatever the kill interrupted.
      const events = readEvents(join(camp, r.runDir));
      expect(events.flatMap((e) => (e.type === "step" ? [e.step] : [])), r.id).toEqual([1, 2, 3]);
      expect(events.at(-1), r.id).toMatchObject({ type: "end", reason: "done", step: STEPS });
    }
    expect(campaign.runs.map((r) => [r.params["policies.main.optimizer.lr"], r.seed])).toEqual([
      [0.0003, 1],
      [0.0003, 2],
      [0.003, 1],
      [0.003, 2],
    ]);

    const summary = SweepSummarySchema.parse(JSON.parse(readFileSync(join(camp, "summary.json"), "utf8")));
    expect(summary.runs.map((r) => r.id)).toEqual(ids);
    expect(summary.runs.every((r) => r.status === "done" && r.final?.steps === STEPS && r.final.greedy !== null && r.final.sampled !== null)).toBe(true);
    expect(summary.counts).toMatchObject({ done: 4, failed: 0, pending: 0, running: 0, interrupted: 0 });
    expect(summary.configs.map((c) => c.done)).toEqual([2, 2]);
    expect(summary.configs.every((c) => c.greedy?.n === 2 && c.reward?.n === 2)).toBe(true);
    expect(summary.best?.configKey).toBe(summary.configs[0]!.configKey);
    expect(second.events.at(-1)).toMatchObject({ event: "sweep-end", reason: "done", summary: { counts: { done: 4 } } });

    const html = readFileSync(join(camp, "report.html"), "utf8");
    expect(html).toContain("Best config");
    for (const id of ids) {
      expect(html).toContain(`href="runs/${id}/report.html"`);
      // Each run is a line of the overlaid curves (the legend names it).
      expect(html.split(id).length - 1, id).toBeGreaterThan(2);
    }
    expect(existsSync(join(camp, "plots", "eval-success-greedy.svg"))).toBe(true);
    expect(processesNaming(camp)).toEqual([]);
  });
});
