import { describe, expect, it } from "vitest";
import type { Campaign, CampaignRun } from "../../../hub/sweep/campaign.ts";
import { compareRuns, finalMetrics, spread } from "../../../hub/sweep/compare-runs.ts";
import type { RunEvent } from "../../../hub/train/events.ts";

const T = "2026-01-01T00:00:00.000Z";
const step = (n: number, reward: number): RunEvent => ({
  type: "step",
  time: T,
  step: n,
  version: n,
  durationMs: 1,
  episodesPerS: 1,
  perEnv: { arith: { episodes: 4, meanReward: reward, success: 0 } },
  perPolicy: {},
  filteredGroups: 0,
  failures: {},
  merging: { callTokens: 0, sampleTokens: 0 },
});
const evalAt = (n: number, mode: "greedy" | "sampled", success: number, env = "arith", stage: "init" | "rl" = "rl"): RunEvent => ({
  type: "eval",
  time: T,
  step: n,
  env,
  split: "test",
  episodes: 10,
  meanReward: success,
  success,
  mode,
  stage,
});

describe("comparing runs", () => {
  it("a run's final metrics: the last evaluation per mode (mean over environments), the reward of the last quarter of steps", () => {
    const events = [evalAt(0, "greedy", 0.9, "arith", "init"), ...[1, 2, 3, 4, 5, 6, 7, 8].map((n) => step(n, n / 10)), evalAt(4, "greedy", 0.1), evalAt(8, "greedy", 0.5), evalAt(8, "greedy", 0.7, "countdown"), evalAt(8, "sampled", 0.25)];
    expect(finalMetrics(events)).toEqual({ greedy: 0.6, sampled: 0.25, reward: expect.closeTo(0.75, 9), steps: 8 });
    expect(finalMetrics([evalAt(0, "greedy", 0.9, "arith", "init")])).toEqual({ greedy: null, sampled: null, reward: null, steps: 0 });
  });

  it("spread: mean, sample standard deviation, min and max", () => {
    expect(spread([])).toBeNull();
    expect(spread([0.5])).toEqual({ mean: 0.5, std: 0, min: 0.5, max: 0.5, n: 1 });
    expect(spread([1, 3])).toEqual({ mean: 2, std: Math.SQRT2, min: 1, max: 3, n: 2 });
  });

  it("groups runs by config over their done seeds, best mean greedy success first", () => {
    const run = (id: string, configKey: string, seed: number, status: CampaignRun["status"] = "done"): CampaignRun => ({
      id,
      params: { lr: configKey },
      seed,
      configKey,
      label: `lr=${configKey}`,
      status,
      exitCode: status === "done" ? 0 : 1,
      runDir: `runs/${id}`,
      config: `configs/${id}.yaml`,
      starts: 1,
    });
    const campaign: Campaign = {
      version: 1,
      name: "c",
      sweepFile: "/s.yaml",
      createdAt: T,
      parallel: 1,
      ownerPid: null,
      runs: [run("a1", "a", 1), run("a2", "a", 2), run("b1", "b", 1), run("b2", "b", 2, "failed")],
    };
    const events = new Map<string, RunEvent[]>([
      ["a1", [step(1, 0.2), evalAt(1, "greedy", 0.2)]],
      ["a2", [step(1, 0.4), evalAt(1, "greedy", 0.4)]],
      ["b1", [step(1, 0.1), evalAt(1, "greedy", 0.9)]],
      ["b2", [step(1, 0.1), evalAt(1, "greedy", 0.0)]],
    ]);
    const s = compareRuns("/c", campaign, events, "/c/report.html");
    expect(s.configs.map((c) => [c.configKey, c.done, c.greedy?.mean])).toEqual([
      ["b", 1, 0.9],
      ["a", 2, expect.closeTo(0.3, 9)],
    ]);
    expect(s.configs[1]!.greedy).toMatchObject({ min: 0.2, max: 0.4, n: 2 });
    expect(s.best).toMatchObject({ configKey: "b", by: "greedy", mean: 0.9 });
    expect(s.counts).toMatchObject({ done: 3, failed: 1, pending: 0 });
  });
});
