import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readLatestCheckpoint } from "../../../hub/train/checkpoint.ts";
import { startWeights, weightsDir } from "../../../hub/train/warm-start.ts";
import { RunConfigSchema } from "../../../server/config/index.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";

afterAll(removeTempDirs);

// Found in exploratory testing of resume and checkpoints: what a run starts or resumes from, with
// messages that say what to do (the runs themselves: crash-resume.test.ts).
describe("readLatestCheckpoint", () => {
  it("none: a run that never wrote a checkpoint; damaged: one whose checkpoints are there but latest.json is not", () => {
    const runDir = tempDir("latest-checkpoint");
    expect(readLatestCheckpoint(runDir).kind).toBe("none");
    mkdirSync(join(runDir, "checkpoints", "step-000003"), { recursive: true });
    const damaged = readLatestCheckpoint(runDir);
    expect(damaged).toMatchObject({ kind: "damaged" });
    expect(damaged.kind !== "ok" && damaged.why).toContain('{"checkpoint":"step-000003"}');
    writeFileSync(join(runDir, "checkpoints", "latest.json"), '{"checkpo');
    expect(readLatestCheckpoint(runDir)).toMatchObject({ kind: "damaged", why: expect.stringContaining("not a checkpoint pointer") });
  });
});

describe("weightsDir (run.init, --from, warmStart.source checkpoint)", () => {
  it("names the policies a checkpoint holds when it lacks the one asked for", () => {
    const ckpt = tempDir("weights-dir");
    writeFileSync(join(ckpt, "state.json"), "{}");
    mkdirSync(join(ckpt, "policies", "main"), { recursive: true });
    expect(weightsDir(ckpt, "main")).toBe(join(ckpt, "policies", "main"));
    expect(() => weightsDir(ckpt, "other")).toThrow(/holds no policy 'other' \(it holds 'main'\).*policies\/main/);
  });
});

describe("startWeights (what openRun checks before a fresh run writes anything)", () => {
  const config = (extra: Record<string, unknown>) =>
    RunConfigSchema.parse({ policies: { main: {} }, environments: [{ name: "arith", roles: { solver: "main" } }], ...extra });

  // Regression: `train --from <typo>` failed after the run directory had a run.db, which then had to be removed by hand.
  it("names a --from, run.init or warmStart.path that does not exist", () => {
    const project = tempDir("start-weights");
    expect(startWeights(config({}), project)).toBeUndefined();
    expect(() => startWeights(config({ run: { init: "runs/typo" } }), project)).toThrow(`run.init (--from) '${join(project, "runs", "typo")}' does not exist`);
    expect(() => startWeights(config({ warmStart: { source: "checkpoint", path: "nowhere" } }), project)).toThrow(`warmStart.path '${join(project, "nowhere")}' does not exist`);
    expect(() => startWeights(config({ warmStart: { source: "checkpoint" } }), project)).toThrow(/names no weights/);
  });

  it("gives the folder when every policy's weights are in it", () => {
    const project = tempDir("start-weights");
    mkdirSync(join(project, "ckpt", "policies", "main"), { recursive: true });
    writeFileSync(join(project, "ckpt", "state.json"), "{}");
    expect(startWeights(config({ run: { init: "ckpt" } }), project)).toBe(join(project, "ckpt"));
    expect(() => startWeights(config({ run: { init: "ckpt" }, policies: { main: {}, other: {} } }), project)).toThrow(/holds no policy 'other'/);
  });
});
