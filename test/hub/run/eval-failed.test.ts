import { cpSync, readFileSync, writeFileSync } from "node:fs";
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
    // an unknown split is refused at the start now: the evaluation's split is one whose task file is broken
    const project = tempDir("eval-failed");
    const plugin = join(project, "arith");
    cpSync(join(import.meta.dirname, "../../../environments/arith"), plugin, { recursive: true });
    const manifestFile = join(plugin, "agentjet.env.json");
    const manifest = JSON.parse(readFileSync(manifestFile, "utf8")) as { splits: Record<string, unknown> };
    manifest.splits.broken = { file: "broken.jsonl" };
    writeFileSync(manifestFile, JSON.stringify(manifest));
    writeFileSync(join(plugin, "broken.jsonl"), "not a task\n");
    config.environments[0]!.path = plugin;
    config.eval.every = 1;
    config.eval.split = "broken";
    const runDir = join(project, "run");
    const result = await runTraining({ config, runDir, projectDir: project, port: 0, progress: quiet, report: false });
    expect(result.reason).toBe("done");

    const events = readEvents(runDir);
    expect(events.find((e) => e.type === "start")).toMatchObject({ format: EVENTS_FORMAT });
    const failed = events.filter((e) => e.type === "eval-failed");
    expect(failed).toMatchObject([
      { step: 0, code: "AJ_ERR_PLUGIN_TASK_FILE" },
      { step: 1, code: "AJ_ERR_PLUGIN_TASK_FILE" },
    ]);
    expect(events.some((e) => e.type === "eval")).toBe(false);

    const summary = await buildReport(runDir);
    expect(summary.skill.failedEvals.map((f) => [f.step, f.code])).toEqual([
      [0, "AJ_ERR_PLUGIN_TASK_FILE"],
      [1, "AJ_ERR_PLUGIN_TASK_FILE"],
    ]);
    expect(summary.skill.headline).toHaveLength(1);
    expect(summary.skill.headline[0]).toMatch(/^arith: no evaluation finished \(evaluation at step 0 failed: .*broken\.jsonl:1: not JSON.*; 1 later one\(s\) failed too\)$/);
    const html = readFileSync(join(runDir, "report.html"), "utf8");
    expect(html).toContain("No evaluation finished in this run.");
    expect(html).toContain("2 evaluation(s) failed");
    expect(html).toContain("<td>AJ_ERR_PLUGIN_TASK_FILE</td>");
  });
});
