import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildReport } from "../../../hub/report/build-report.ts";
import { readMetrics } from "../../../hub/report/read-metrics.ts";
import type { RunEvent } from "../../../hub/train/events.ts";

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
});
