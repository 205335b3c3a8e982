import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeCheckpoint } from "../../../hub/train/checkpoint.ts";
import { runTraining } from "../../../hub/train/run-training.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";
import { quiet, readEvents, smallQuickstart } from "./helpers.ts";

afterAll(removeTempDirs);

const state = { step: 1, versions: { main: 1 }, final: false, scheduler: { version: 1 as const, nextBatch: 0, streams: {}, ledger: {}, evalRuns: 0, doneGroups: [], partialEpisodes: [] } };

const small = () => smallQuickstart({ steps: 2, checkpointEvery: 1, batchTasks: 2, groupSize: 2, filterEqualRewards: false });

// Regression (issue 18, item 8): an unwritable run directory died with an unhandled EACCES stack trace;
// an unwritable checkpoints/ was logged as "training step failed" and the run gave up blaming filtering.
// (The tests run as root, where permissions do not bite: a file where a folder must go fails the same way.)
describe("storage errors stop the run with a coded error naming the path", () => {
  it("writeCheckpoint: AJ_ERR_TRAIN_STORAGE with the path it could not write", async () => {
    const runDir = tempDir("storage-ckpt");
    writeFileSync(join(runDir, "checkpoints"), "not a folder");
    const err = await writeCheckpoint(runDir, new Map(), state).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "AJ_ERR_TRAIN_STORAGE", path: expect.stringContaining(join(runDir, "checkpoints")) });
    expect((err as Error).message).toMatch(/cannot create the checkpoint folder '.*checkpoints.*' \(E[A-Z]+\)/);
  });

  it("an unwritable run directory: the run does not start, the error names it", async () => {
    const project = tempDir("storage-run");
    writeFileSync(join(project, "blocked"), "a file where the run directory should go");
    const runDir = join(project, "blocked", "run");
    const err = await runTraining({ config: await small(), runDir, projectDir: project, port: 0, progress: quiet }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "AJ_ERR_TRAIN_STORAGE", path: runDir });
  });

  it("an unwritable checkpoints/: the run stops after the step that trained, as a storage failure, with its end event", { timeout: 120_000 }, async () => {
    const project = tempDir("storage-ckpt-run");
    const runDir = join(project, "run");
    const config = await small();
    config.run.steps = 4;
    const events: string[] = [];
    const started = runTraining({
      config,
      runDir,
      projectDir: project,
      port: 0,
      progress: quiet,
      onEvent: (e) => {
        // Block checkpoints/ once the run directory exists (before the first step's checkpoint).
        if (e.type === "start") writeFileSync(join(runDir, "checkpoints"), "not a folder");
        events.push(e.type === "log" ? `log:${e.message}` : e.type);
      },
    });
    const result = await started;
    expect(result.reason).toBe("failed");
    expect(result.error).toMatchObject({ code: "AJ_ERR_TRAIN_STORAGE" });
    const written = readEvents(runDir);
    const steps = written.flatMap((e) => (e.type === "step" ? [e.step] : []));
    expect(steps[0]).toBe(1);
    expect(steps.length).toBeLessThan(4);
    expect(written.at(-1)).toMatchObject({ type: "end", reason: "failed" });
    expect(events.some((e) => e.includes("training step failed"))).toBe(false);
    expect(events.some((e) => e.startsWith("log:cannot create the checkpoint folder"))).toBe(true);
  });
});
