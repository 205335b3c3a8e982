import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { runTraining } from "../../../hub/train/run-training.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";
import { type QuickstartCut, quiet, readEvents, smallQuickstart } from "./helpers.ts";

afterAll(removeTempDirs);

/** Trains the quickstart cut to the end in a fresh project's `run` folder; `resume()` runs it again with --resume. */
async function finishedRun(name: string, cut: QuickstartCut) {
  const project = tempDir(name);
  const runDir = join(project, "run");
  const train = async (resume: boolean) =>
    runTraining({ config: await smallQuickstart(cut), runDir, resume, projectDir: project, port: 0, progress: quiet, report: false });
  expect((await train(false)).reason).toBe("done");
  return { runDir, resume: () => train(true) };
}

/** The steps of the run's step events, in order. */
const stepsOf = (runDir: string) => readEvents(runDir).flatMap((e) => (e.type === "step" ? [e.step] : []));

// Regression (issue 18, item 5): resumed from a periodic checkpoint after a crash, the run dropped the
// pool yet treated the checkpoint's complete groups as done (never trained), and the ledger and
// metrics.jsonl held the crashed session's steps past the checkpoint twice.
describe("agentjet train: --resume after a crash past a periodic checkpoint", () => {
  it("trains each finished group once in the final weights' lineage; one step event per step", { timeout: 240_000 }, async () => {
    const { runDir, resume } = await finishedRun("train-crash", { steps: 4, checkpointEvery: 2, batchTasks: 3, groupSize: 2, concurrency: 4, filterEqualRewards: false });
    // What a kill -9 after step 4 (before its final checkpoint) leaves: latest.json names step 2's periodic checkpoint.
    const ckpt = join(runDir, "checkpoints");
    writeFileSync(join(ckpt, "latest.json"), `${JSON.stringify({ checkpoint: "step-000002" })}\n`);
    const state = JSON.parse(readFileSync(join(ckpt, "step-000002", "state.json"), "utf8")) as { final: boolean; scheduler: { doneGroups: string[] } };
    expect(state.final).toBe(false);

    expect(await resume()).toMatchObject({ reason: "done", step: 4 });

    expect(stepsOf(runDir)).toEqual([1, 2, 3, 4]);
    const db = new Database(join(runDir, "run.db"), { readonly: true });
    const rows = db
      .prepare("SELECT t.step, t.episode_id, e.metadata FROM trained_episodes t JOIN episodes e ON e.episode_id = t.episode_id")
      .all() as Array<{ step: number; episode_id: string; metadata: string }>;
    db.close();
    expect(new Set(rows.map((r) => r.step))).toEqual(new Set([1, 2, 3, 4]));
    const byGroup = new Map<string, Set<number>>();
    for (const r of rows) {
      const g = (JSON.parse(r.metadata) as { groupId: string }).groupId;
      byGroup.set(g, (byGroup.get(g) ?? new Set()).add(r.step));
    }
    for (const [g, s] of byGroup) expect(s.size, g).toBe(1);
    // The groups step 2's checkpoint listed as complete (pooled, untrained) were trained after the resume.
    for (const g of state.scheduler.doneGroups) expect(byGroup.has(g), g).toBe(true);
  });
});

// Regression (CI, the sweep's kill-resume test): a run left behind by a killed sweep finished, and the
// resumed sweep ran it again with --resume. Its final checkpoint pooled a ready batch, which the
// resumed start trained as step steps+1.
describe("agentjet train: --resume of a run that already finished", () => {
  it("trains nothing more, even when its final checkpoint pooled a ready batch", { timeout: 180_000 }, async () => {
    const { runDir, resume } = await finishedRun("train-finished", { steps: 2, checkpointEvery: 1, batchTasks: 1, groupSize: 2, concurrency: 8, filterEqualRewards: false });
    const state = JSON.parse(readFileSync(join(runDir, "checkpoints", "step-000002", "state.json"), "utf8")) as { final: boolean };
    expect(state.final).toBe(true);
    const pooled = new Database(join(runDir, "run.db"), { readonly: true });
    const untrained = (pooled.prepare("SELECT COUNT(*) AS n FROM episodes WHERE episode_id NOT IN (SELECT episode_id FROM trained_episodes)").get() as { n: number }).n;
    pooled.close();
    // More than a batch (1 group of 2) finished after the last step: the pool holds a ready batch.
    expect(untrained).toBeGreaterThanOrEqual(2);

    expect(await resume()).toMatchObject({ reason: "done", step: 2, versions: { main: 2 } });
    expect(stepsOf(runDir)).toEqual([1, 2]);
    expect(readEvents(runDir).at(-1)).toMatchObject({ type: "end", reason: "done", step: 2 });
  });
});

// Found in exploratory testing: a run whose newest checkpoint was damaged (state.json truncated or gone,
// latest.json gone) counted as one that stopped before its first checkpoint: --resume said so, played it
// again from step 0 over its own record (metrics.jsonl rewound, the pool dropped, the checkpoints
// overwritten); a truncated state.json crashed with a SyntaxError's stack trace.
describe("agentjet train: --resume of a run whose newest checkpoint is damaged", () => {
  it("is refused, naming the file and the checkpoint to fall back to; the run's record is untouched", { timeout: 180_000 }, async () => {
    const { runDir, resume } = await finishedRun("train-damaged", { steps: 2, checkpointEvery: 1, batchTasks: 1, groupSize: 2, concurrency: 4, filterEqualRewards: false });
    const ckpt = join(runDir, "checkpoints");
    const stateFile = join(ckpt, "step-000002", "state.json");
    const intact = readFileSync(stateFile, "utf8");
    const metrics = readFileSync(join(runDir, "metrics.jsonl"), "utf8");
    const refused = async (why: RegExp, fallback: string) => {
      const err = await resume().then(
        () => null,
        (e: unknown) => e as { code?: string; message: string },
      );
      expect(err?.code).toBe("AJ_ERR_TRAIN_NO_CHECKPOINT");
      expect(err?.message).toMatch(why);
      expect(err?.message).toContain(`{"checkpoint":"${fallback}"}`);
      expect(readFileSync(join(runDir, "metrics.jsonl"), "utf8")).toBe(metrics);
    };

    writeFileSync(stateFile, intact.slice(0, 60));
    await refused(/step-000002\/state\.json is not valid JSON/, "step-000001");
    unlinkSync(stateFile);
    await refused(/step-000002\/state\.json is missing/, "step-000001");
    // A kill between a step folder's rename into place and latest.json: the newest complete folder is the checkpoint.
    writeFileSync(stateFile, intact);
    unlinkSync(join(ckpt, "latest.json"));
    expect(await resume()).toMatchObject({ reason: "done", step: 2 });
    expect(stepsOf(runDir)).toEqual([1, 2]);
  });
});

// Found in exploratory testing: a start or resume from weights the run cannot use is refused before it trains.
describe("agentjet train: start and resume checks", () => {
  it("warmStart.source checkpoint or jsonl with no path is refused, not trained from random weights", { timeout: 60_000 }, async () => {
    const project = tempDir("warm-start-no-path");
    for (const source of ["checkpoint", "jsonl"] as const) {
      const config = await smallQuickstart({ steps: 1, checkpointEvery: 1, batchTasks: 1, groupSize: 2 });
      config.warmStart = { source, steps: 5, batch: 4, split: "train", tasks: 10, lr: 0.003, logEvery: 5 };
      const run = runTraining({ config, runDir: join(project, source), projectDir: project, port: 0, progress: quiet, report: false });
      await expect(run).rejects.toMatchObject({ code: "AJ_ERR_TRAIN_WARM_START", message: expect.stringContaining("set warmStart.path") });
    }
  });

  it("--resume with a policy added to the config is refused, naming the policies the checkpoint holds", { timeout: 120_000 }, async () => {
    const project = tempDir("resume-added-policy");
    const runDir = join(project, "run");
    const config = await smallQuickstart({ steps: 1, checkpointEvery: 1, batchTasks: 1, groupSize: 2, filterEqualRewards: false });
    expect((await runTraining({ config, runDir, projectDir: project, port: 0, progress: quiet, report: false })).reason).toBe("done");
    const metrics = readFileSync(join(runDir, "metrics.jsonl"), "utf8");
    const edited = await smallQuickstart({ steps: 2, checkpointEvery: 1, batchTasks: 1, groupSize: 2, filterEqualRewards: false });
    edited.policies.other = edited.policies.main!;
    const resumed = runTraining({ config: edited, runDir, resume: true, projectDir: project, port: 0, progress: quiet, report: false });
    await expect(resumed).rejects.toMatchObject({
      code: "AJ_ERR_TRAIN_NO_CHECKPOINT",
      message: expect.stringMatching(/policy 'other', which its checkpoint .*step-000001 does not hold \(it holds 'main'\)/),
    });
    expect(readFileSync(join(runDir, "metrics.jsonl"), "utf8")).toBe(metrics);
    expect(readEvents(runDir).filter((e) => e.type === "step")).toHaveLength(1);
  });
});
