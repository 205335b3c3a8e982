import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { buildReport } from "../../../hub/report/build-report.ts";
import { chartsFor } from "../../../hub/report/charts.ts";
import { readMetrics } from "../../../hub/report/read-metrics.ts";
import { EVENTS_FORMAT, type RunEvent } from "../../../hub/train/events.ts";
import { command as reportCommand } from "../../../hub/cli/commands/report.ts";

function stepEvent(step: number, reward: number): RunEvent {
  return {
    type: "step",
    time: new Date(0).toISOString(),
    step,
    version: step,
    durationMs: 10,
    episodesPerS: 5,
    perEnv: { arith: { episodes: 8, meanReward: reward, success: reward } },
    perRole: { "arith/solver": { agents: 8, meanReward: reward, success: reward } },
    perPolicy: { main: { samples: 8, meanReward: reward, loss: 0.1, tokens: 40, gradNorm: 1, trainMs: 5 } },
    filteredGroups: 1,
    failures: step === 2 ? { crash: 1 } : {},
    merging: { callTokens: 100, sampleTokens: 60 },
  };
}

describe("report", () => {
  it("writes report.html and SVG plots from metrics.jsonl", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aj-report-"));
    const events: RunEvent[] = [
      { type: "start", time: "t", runDir: dir, steps: 4, policies: ["main"], environments: ["arith"] },
      ...[0.1, 0.2, 0.5, 0.8].map((r, i) => stepEvent(i + 1, r)),
      { type: "eval", time: "t", step: 4, env: "arith", split: "test", episodes: 16, meanReward: 0.7, success: 0.7 },
      { type: "end", time: "t", reason: "done", step: 4 },
    ];
    writeFileSync(join(dir, "metrics.jsonl"), events.map((e) => JSON.stringify(e)).join("\n") + '\n{"type":"st');
    const summary = await buildReport(dir);
    expect(summary.steps).toBe(4);
    expect(summary.rewardLast.arith).toBeGreaterThan(summary.rewardFirst.arith!);
    expect(summary.tokenSavings.ratio).toBeCloseTo(0.6);
    expect(summary.failures).toEqual({ crash: 1 });
    const html = readFileSync(join(dir, "report.html"), "utf8");
    expect(html).toContain("<svg");
    expect(html).toContain("Evaluation");
    expect(html).toContain("per role");
    for (const f of ["reward-per-env", "success-per-env", "success-per-role", "reward-per-policy", "training-tokens", "failures"])
      expect(existsSync(join(dir, "plots", `${f}.svg`))).toBe(true);
    expect(readMetrics(join(dir, "metrics.jsonl")).skipped).toHaveLength(1);
  });

  it("shows the invalid and fallback decision rates per role of an evaluation", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aj-report-"));
    const decisions = {
      total: 200,
      invalid: 10,
      fallbacks: 4,
      byRole: { werewolf: { total: 150, invalid: 9, fallbacks: 3 }, seer: { total: 50, invalid: 1, fallbacks: 1 } },
    };
    const events: RunEvent[] = [
      { type: "start", time: "t", runDir: dir, steps: 1, policies: ["wolf"], environments: ["werewolves"] },
      stepEvent(1, 0.5),
      { type: "eval", time: "t", step: 1, env: "werewolves", split: "test-compact", episodes: 10, meanReward: 0.8, success: 0.8, mode: "greedy", decisions },
      { type: "end", time: "t", reason: "done", step: 1 },
    ];
    writeFileSync(join(dir, "metrics.jsonl"), events.map((e) => JSON.stringify(e)).join("\n"));
    await buildReport(dir);
    const html = readFileSync(join(dir, "report.html"), "utf8");
    expect(html).toContain("invalid (per role)");
    for (const cell of ["5.0%", "werewolf 6.0% of 150", "seer 2.0% of 50", "2.0%", "werewolf 2.0% of 150"]) expect(html).toContain(cell);
  });

  // Regression (issue 22, item 8): the "Reward per environment" table dropped an environment that no
  // step of the last quarter trained on.
  it("keeps an environment missing from the last quarter of steps in the reward table", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aj-report-"));
    const first = stepEvent(1, 0.2) as Extract<RunEvent, { type: "step" }>;
    const events: RunEvent[] = [
      { type: "start", time: "t", runDir: dir, steps: 4, policies: ["main"], environments: ["arith"] },
      { ...first, perEnv: { ...first.perEnv, countdown: { episodes: 4, meanReward: 0.4, success: 0 } } },
      ...[2, 3, 4].map((i) => stepEvent(i, 0.5)),
      { type: "end", time: "t", reason: "done", step: 4 },
    ];
    writeFileSync(join(dir, "metrics.jsonl"), events.map((e) => JSON.stringify(e)).join("\n"));
    const summary = await buildReport(dir);
    expect(summary.rewardFirst).toEqual({ arith: 0.2, countdown: 0.4 });
    expect(summary.rewardLast).toEqual({ arith: 0.5 });
    const html = readFileSync(join(dir, "report.html"), "utf8");
    expect(html).toContain("<tr><td>countdown</td><td>0.400</td><td>-</td></tr>");
    expect(html).toContain("<tr><td>arith</td><td>0.200</td><td>0.500</td></tr>");
  });

  it("an evaluation that failed is not reported as one never asked for", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aj-report-"));
    const events: RunEvent[] = [
      { type: "start", time: "t", runDir: dir, steps: 4, policies: ["main"], environments: ["aime"], format: EVENTS_FORMAT },
      { type: "log", time: "t", level: "warn", message: "evaluation at step 0 failed: no replica served version 0 after 1 tries" },
      { type: "eval-failed", time: "t", step: 0, error: "no replica served version 0 after 1 tries", code: "AJ_ERR_NO_REPLICA" },
      { type: "end", time: "t", reason: "failed", step: 0 },
    ];
    writeFileSync(join(dir, "metrics.jsonl"), events.map((e) => JSON.stringify(e)).join("\n"));
    const summary = await buildReport(dir);
    expect(summary.skill.headline).toEqual(["aime: no evaluation finished (evaluation at step 0 failed: no replica served version 0 after 1 tries)"]);
    expect(summary.skill.failedEvals).toEqual([{ step: 0, error: "no replica served version 0 after 1 tries", code: "AJ_ERR_NO_REPLICA" }]);
  });

  // Fallback: runs written before eval-failed events (a start event without `format`) said a failed
  // evaluation only in a warning line, which is read for those sessions alone.
  it("reads a failed evaluation from the log line of a run written before eval-failed events", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aj-report-"));
    const events: RunEvent[] = [
      { type: "start", time: "t", runDir: dir, steps: 4, policies: ["main"], environments: ["aime"] },
      { type: "log", time: "t", level: "warn", message: "evaluation at step 0 failed: no replica served version 0 after 1 tries" },
      { type: "end", time: "t", reason: "failed", step: 0 },
    ];
    writeFileSync(join(dir, "metrics.jsonl"), events.map((e) => JSON.stringify(e)).join("\n"));
    const summary = await buildReport(dir);
    expect(summary.skill.headline).toEqual(["aime: no evaluation finished (evaluation at step 0 failed: no replica served version 0 after 1 tries)"]);
    expect(summary.skill.failedEvals).toEqual([{ step: 0, error: "no replica served version 0 after 1 tries" }]);
  });

  // A log line that quotes a task's text ("evaluation at step 3 failed: ...") passed for a failed
  // evaluation, and the report said none finished in a run that never evaluated.
  it("a log line with the old words is no failed evaluation in a run that records them as events", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aj-report-"));
    const task = "evaluation at step 3 failed: reply with the step number";
    const events: RunEvent[] = [
      { type: "start", time: "t", runDir: dir, steps: 4, policies: ["main"], environments: ["arith"], format: EVENTS_FORMAT },
      stepEvent(1, 0.5),
      { type: "log", time: "t", level: "warn", message: task },
      { type: "log", time: "t", level: "error", message: task },
      { type: "end", time: "t", reason: "failed", step: 1 },
    ];
    writeFileSync(join(dir, "metrics.jsonl"), events.map((e) => JSON.stringify(e)).join("\n"));
    const summary = await buildReport(dir);
    expect(summary.skill.headline).toEqual(["arith: no evaluation ran (set eval.every to measure success)"]);
    expect(summary.skill.failedEvals).toEqual([]);
    const html = readFileSync(join(dir, "report.html"), "utf8");
    expect(html).toContain("No evaluation in this run.");
    expect(html).not.toContain("evaluation(s) failed");
  });

  it("a run resumed by newer code reads the log's words only for the session written before", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aj-report-"));
    const ev = (step: number): RunEvent => ({ type: "eval", time: "t", step, env: "arith", split: "test", episodes: 10, meanReward: 0.5, success: 0.5, mode: "greedy" });
    const events: RunEvent[] = [
      { type: "start", time: "t", runDir: dir, steps: 4, policies: ["main"], environments: ["arith"] },
      { type: "log", time: "t", level: "warn", message: "evaluation at step 0 failed: timed out" },
      stepEvent(1, 0.2),
      ev(1),
      { type: "end", time: "t", reason: "interrupted", step: 1 },
      { type: "start", time: "t", runDir: dir, steps: 4, resumedFrom: 1, policies: ["main"], environments: ["arith"], format: EVENTS_FORMAT },
      { type: "log", time: "t", level: "warn", message: "evaluation at step 2 failed: a task's text" },
      stepEvent(2, 0.4),
      { type: "eval-failed", time: "t", step: 2, error: "no replica served version 2 after 1 tries", code: "AJ_ERR_NO_REPLICA" },
      { type: "end", time: "t", reason: "done", step: 2 },
    ];
    writeFileSync(join(dir, "metrics.jsonl"), events.map((e) => JSON.stringify(e)).join("\n"));
    const summary = await buildReport(dir);
    expect(summary.skill.failedEvals).toEqual([
      { step: 0, error: "timed out" },
      { step: 2, error: "no replica served version 2 after 1 tries", code: "AJ_ERR_NO_REPLICA" },
    ]);
    // the evaluation that finished heads the report; the failed ones are listed under it
    expect(summary.skill.headline).toEqual(["arith: success greedy 50.0% -> 50.0%"]);
    const html = readFileSync(join(dir, "report.html"), "utf8");
    expect(html).toContain("2 evaluation(s) failed");
    expect(html).toContain('<tr><td>2</td><td>AJ_ERR_NO_REPLICA</td><td style="text-align:left">no replica served version 2 after 1 tries</td></tr>');
    expect(html).toContain('<tr><td>0</td><td>-</td><td style="text-align:left">timed out</td></tr>');
  });

  it("heads with success greedy and sampled, flags a collapsed policy and filtered groups, and lists every environment", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aj-report-"));
    const ev = (step: number, env: string, mode: "greedy" | "sampled", success: number, extra: Partial<RunEvent> = {}): RunEvent =>
      ({ type: "eval", time: "t", step, env, split: "test", episodes: 100, meanReward: 0.18, success, mode, temperature: mode === "greedy" ? 0 : 1, stage: "rl", topAnswer: "7", topAnswerShare: 0.1, collapsed: false, ...extra }) as RunEvent;
    const events: RunEvent[] = [
      { type: "start", time: "t", runDir: dir, steps: 4, policies: ["main"], environments: ["arith", "countdown"] },
      ev(0, "arith", "greedy", 0, { stage: "init" }),
      ...[1, 2, 3, 4].map((i) => ({ ...(stepEvent(i, 0.18) as Extract<RunEvent, { type: "step" }>), filteredGroups: 14, trainedGroups: 2 })),
      ev(4, "arith", "greedy", 0.02, { topAnswer: "0", topAnswerShare: 0.9, collapsed: true }),
      ev(4, "arith", "sampled", 0.05),
      { type: "end", time: "t", reason: "done", step: 4 },
    ];
    writeFileSync(join(dir, "metrics.jsonl"), events.map((e) => JSON.stringify(e)).join("\n"));
    const summary = await buildReport(dir);
    expect(Object.keys(summary.skill.perEnv)).toEqual(["arith", "countdown"]);
    expect(summary.skill.perEnv.arith).toMatchObject({ greedy: { first: 0, last: 0.02, firstBeforeWarmStart: true }, sampled: { first: 0.05, last: 0.05 } });
    expect(summary.skill.headline).toEqual([
      "arith: success greedy 0.0% -> 2.0%, sampled 5.0% -> 5.0% (from before the warm-start)",
      "countdown: no evaluation ran (set eval.every to measure success)",
    ]);
    expect(summary.skill.filteredShare).toBeCloseTo(14 / 16);
    expect(summary.skill.warnings).toHaveLength(2);
    expect(summary.skill.warnings[0]).toContain("collapsed");
    expect(summary.skill.warnings[0]).toContain("'0'");
    expect(summary.skill.warnings[1]).toContain("filtered");
    const html = readFileSync(join(dir, "report.html"), "utf8");
    expect(html).toContain("COLLAPSED");
    expect(html).toContain("the policy collapsed");
    expect(html).toContain("<td>countdown</td>");
    expect(existsSync(join(dir, "plots", "eval-success.svg"))).toBe(true);
  });

  // A damaged line in the middle of metrics.jsonl (here: a step) was dropped without a word: the report
  // said "1 steps" for a run of 2, and nothing told the user that numbers were missing.
  it("says which lines of metrics.jsonl it could not read (terminal, --json and report.html)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aj-report-"));
    const lines = [
      JSON.stringify({ type: "start", time: "t", runDir: dir, steps: 2, policies: ["main"], environments: ["arith"] }),
      '{"type":"step", damaged',
      JSON.stringify(stepEvent(2, 0.5)),
      JSON.stringify({ type: "end", time: "t", reason: "done", step: 2 }),
    ];
    writeFileSync(join(dir, "metrics.jsonl"), `${lines.join("\n")}\n`);
    const summary = await buildReport(dir);
    expect(summary.steps).toBe(1);
    expect(summary.skippedLines).toEqual([2]);
    expect(readFileSync(join(dir, "report.html"), "utf8")).toContain("metrics.jsonl: 1 line(s) could not be read and are left out of this report (line 2)");
    const printed: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((line: unknown) => void printed.push(String(line)));
    try {
      expect(await reportCommand.run([dir])).toBe(0);
      expect(printed.join("\n")).toContain("warning: metrics.jsonl: 1 line(s) could not be read");
      printed.length = 0;
      expect(await reportCommand.run([dir, "--json"])).toBe(0);
      expect(JSON.parse(printed[0]!)).toMatchObject({ steps: 1, skippedLines: [2] });
    } finally {
      log.mockRestore();
    }
    // an intact file reports none
    writeFileSync(join(dir, "metrics.jsonl"), `${[lines[0], lines[2], lines[3]].join("\n")}\n`);
    expect((await buildReport(dir)).skippedLines).toEqual([]);
  });

  // The evaluation reward chart drew greedy and sampled evaluations (and the one before the warm-start,
  // also at step 0) as one series, so its line zigzagged between the modes at every evaluation step.
  it("draws evaluation reward one line per environment, split and mode, without the evaluation before the warm-start", () => {
    const ev = (step: number, mode: "greedy" | "sampled", meanReward: number, stage: "init" | "rl" = "rl"): RunEvent =>
      ({ type: "eval", time: "t", step, env: "arith", split: "test", episodes: 10, meanReward, success: meanReward, mode, stage }) as RunEvent;
    const chart = chartsFor([ev(0, "greedy", 0, "init"), ev(0, "sampled", 0.01, "init"), ev(0, "greedy", 0.3), ev(0, "sampled", 0.2), ev(5, "greedy", 0.6), ev(5, "sampled", 0.4)])["eval-reward"]!;
    expect(chart.points).toEqual([
      { x: 0, y: 0.3, series: "arith (test) greedy" },
      { x: 0, y: 0.2, series: "arith (test) sampled" },
      { x: 5, y: 0.6, series: "arith (test) greedy" },
      { x: 5, y: 0.4, series: "arith (test) sampled" },
    ]);
  });
});
