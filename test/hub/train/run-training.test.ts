import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import type { EvalEvent, StepEvent } from "../../../hub/train/events.ts";
import { runTraining } from "../../../hub/train/run-training.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";
import { exampleConfig, quiet, readEvents, smallQuickstart } from "./helpers.ts";

afterAll(removeTempDirs);

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

describe("agentjet train: the quickstart, shortened (warm-start + RL)", () => {
  it("learns: greedy held-out success goes above 60% after the warm-start and stays there to the end of RL", { timeout: 600_000 }, async () => {
    const config = await exampleConfig("quickstart");
    config.warmStart!.steps = 1100;
    config.warmStart!.logEvery = 550;
    config.run.steps = 6;
    config.run.checkpointEvery = 3;
    config.eval.every = 6;
    config.eval.tasks = 100;
    config.batching.batchTasks = 8;
    const project = tempDir("train-qs");
    const runDir = join(project, "run");
    const result = await runTraining({ config, runDir, projectDir: project, port: 0, progress: quiet });
    expect(result.reason).toBe("done");
    expect(result.versions).toEqual({ main: 6 });

    for (const f of ["config.yaml", "run.db", "metrics.jsonl", "report.html", "checkpoints/latest.json", "checkpoints/step-000003", "checkpoints/step-000006", "warm-start/main/embedded.json"]) {
      expect(existsSync(join(runDir, f)), f).toBe(true);
    }
    expect(readdirSync(join(runDir, "plots")).filter((f) => f.endsWith(".svg")).length).toBeGreaterThanOrEqual(3);

    const events = readEvents(runDir);
    const steps = events.filter((e): e is StepEvent => e.type === "step");
    expect(steps.map((s) => s.step)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(events.filter((e) => e.type === "warm-start").map((e) => (e.type === "warm-start" ? e.step : 0))).toEqual([550, 1100]);
    const evals = events.filter((e): e is EvalEvent => e.type === "eval");
    const greedy = evals.filter((e) => e.mode === "greedy");
    expect(evals.map((e) => `${e.step}${e.stage === "init" ? "i" : ""}/${e.mode}`)).toEqual(["0i/greedy", "0i/sampled", "0/greedy", "0/sampled", "6/greedy", "6/sampled"]);
    expect(greedy[0]!.success).toBeLessThan(0.1);
    // After the warm-start (step 0, before RL) and at the end of RL (step 6): skill kept, no collapse.
    for (const e of greedy.slice(1)) {
      expect(e.success, `greedy at step ${e.step}`).toBeGreaterThan(0.6);
      expect(e.collapsed).toBe(false);
    }
    const report = readFileSync(join(runDir, "report.html"), "utf8");
    expect(report).toContain("Held-out success");
    expect(report).toContain("arith: success greedy");
    expect(events.at(-1)).toMatchObject({ type: "end", reason: "done", step: 6 });
  });
});

describe("agentjet train: a stop and --resume", () => {
  const small = () => smallQuickstart({ steps: 6, checkpointEvery: 100, batchTasks: 6, groupSize: 4, concurrency: 8 });
  const ledger = (runDir: string) => {
    const db = new Database(join(runDir, "run.db"), { readonly: true });
    try {
      return db.prepare("SELECT policy, episode_id, step FROM trained_episodes ORDER BY step").all() as Array<{ policy: string; episode_id: string; step: number }>;
    } finally {
      db.close();
    }
  };

  it("ends at the same version count as an uninterrupted run and trains no episode twice", { timeout: 180_000 }, async () => {
    const project = tempDir("train-resume");
    const whole = await runTraining({ config: await small(), runDir: join(project, "whole"), projectDir: project, port: 0, progress: quiet, report: false });
    expect(whole).toMatchObject({ reason: "done", step: 6, versions: { main: 6 } });

    const runDir = join(project, "halves");
    const stop = new AbortController();
    const first = await runTraining({
      config: await small(),
      runDir,
      projectDir: project,
      port: 0,
      progress: quiet,
      report: false,
      signal: stop.signal,
      onEvent: (e) => {
        if (e.type === "step" && e.step === 3) stop.abort();
      },
    });
    expect(first.reason).toBe("interrupted");
    expect(first.step).toBeGreaterThanOrEqual(3);
    expect(first.step).toBeLessThan(6);
    const before = ledger(runDir);
    expect(new Set(before.map((r) => r.step)).size).toBe(first.step);

    const second = await runTraining({ config: await small(), runDir, resume: true, projectDir: project, port: 0, progress: quiet });
    expect(second.reason).toBe("done");
    expect(second.versions).toEqual(whole.versions);

    const after = ledger(runDir);
    const ids = after.map((r) => `${r.policy}/${r.episode_id}`);
    expect(new Set(ids).size).toBe(ids.length);
    expect(after.slice(0, before.length)).toEqual(before);
    expect([...new Set(after.map((r) => r.step))]).toEqual([1, 2, 3, 4, 5, 6]);
    const events = readEvents(runDir);
    expect(events.filter((e) => e.type === "start").at(-1)).toMatchObject({ resumedFrom: first.step });
    const steps = events.filter((e): e is StepEvent => e.type === "step");
    expect(steps.map((e) => e.step)).toEqual([1, 2, 3, 4, 5, 6]);
    // The resumed run plans the unfinished batch again under new episode ids: none collides with run.db.
    expect(steps.map((e) => e.failures.protocol ?? 0)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(existsSync(join(runDir, "report.html"))).toBe(true);
  });
});
