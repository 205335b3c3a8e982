import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildReport } from "../../../hub/report/build-report.ts";
import { EVENTS_FORMAT } from "../../../hub/train/events.ts";
import { runTraining } from "../../../hub/train/run-training.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";
import { quiet, readEvents, smallQuickstart } from "../train/helpers.ts";

afterAll(removeTempDirs);

// The report found a failed evaluation by matching the run log's words: a rewording broke it, and any
// line with those words (a task's text in an error) passed for one. The run now records the fact.
describe("an evaluation that fails during agentjet train", () => {
  it("is recorded as an eval-failed event with its code, and the report says no evaluation finished", { timeout: 120_000 }, async () => {
    const config = await smallQuickstart({ steps: 1, checkpointEvery: 100, batchTasks: 2, groupSize: 2, filterEqualRewards: false });
    config.eval.every = 1;
    config.eval.split = "no-such-split";
    const project = tempDir("eval-failed");
    const runDir = join(project, "run");
    const result = await runTraining({ config, runDir, projectDir: project, port: 0, progress: quiet, report: false });
    expect(result.reason).toBe("done");

    const events = readEvents(runDir);
    expect(events.find((e) => e.type === "start")).toMatchObject({ format: EVENTS_FORMAT });
    const failed = events.filter((e) => e.type === "eval-failed");
    expect(failed).toMatchObject([
      { step: 0, code: "AJ_ERR_PLUGIN_UNKNOWN_SPLIT" },
      { step: 1, code: "AJ_ERR_PLUGIN_UNKNOWN_SPLIT" },
    ]);
    expect(events.some((e) => e.type === "eval")).toBe(false);

    const summary = await buildReport(runDir);
    expect(summary.skill.failedEvals.map((f) => [f.step, f.code])).toEqual([
      [0, "AJ_ERR_PLUGIN_UNKNOWN_SPLIT"],
      [1, "AJ_ERR_PLUGIN_UNKNOWN_SPLIT"],
    ]);
    expect(summary.skill.headline).toHaveLength(1);
    expect(summary.skill.headline[0]).toMatch(/^arith: no evaluation finished \(evaluation at step 0 failed: no split "no-such-split" .*; 1 later one\(s\) failed too\)$/);
    const html = readFileSync(join(runDir, "report.html"), "utf8");
    expect(html).toContain("No evaluation finished in this run.");
    expect(html).toContain("2 evaluation(s) failed");
    expect(html).toContain("<td>AJ_ERR_PLUGIN_UNKNOWN_SPLIT</td>");
  });
});
