import { describe, expect, it } from "vitest";
import { computeAdvantages } from "../../../server/training/compute-advantages.ts";
import type { Sample } from "../../../server/training/sample.ts";

function sample(taskId: string, episodeId: string, reward: number, idx = 0): Sample {
  return {
    sampleId: `${episodeId}:a:${idx}`, episodeId, agentId: "a", policy: "main", taskId, env: "smoke", group: `smoke/${taskId}`,
    tokenIds: [1], lossMask: [1], logprobs: [-1], versions: [0], reward, advantage: 0, weight: 1, calls: 1,
  };
}

describe("GRPO advantages", () => {
  // Task t1: episode e1 (reward 1) split into 3 samples, e2 (reward 0) one sample. Task t2 alone.
  const batch = [sample("t1", "e1", 1, 0), sample("t1", "e1", 1, 1), sample("t1", "e1", 1, 2), sample("t1", "e2", 0), sample("t2", "e3", 0.5)];
  const eps = 1e-6;

  it("episode baseline: each episode counts once in mean and std", () => {
    const out = computeAdvantages(batch, { eps, baseline: "episode", lossWeight: "none" });
    // rewards {1, 0}: mean 0.5, sample std sqrt(0.5)
    const a = 0.5 / (Math.SQRT1_2 + eps);
    expect(out.map((s) => s.advantage)).toEqual([a, a, a, -a, 0]);
    expect(out.map((s) => s.weight)).toEqual([1, 1, 1, 1, 1]);
    expect(batch[0]!.advantage).toBe(0);
  });

  it("sample baseline: a split episode counts once per sample", () => {
    const out = computeAdvantages(batch, { eps, baseline: "sample", lossWeight: "none" });
    // rewards {1, 1, 1, 0}: mean 0.75, sample std 0.5
    expect(out[0]!.advantage).toBeCloseTo(0.25 / (0.5 + eps), 12);
    expect(out[3]!.advantage).toBeCloseTo(-0.75 / (0.5 + eps), 12);
  });

  it("per-episode loss weight gives an episode split into N samples 1/N each", () => {
    const out = computeAdvantages(batch, { eps, baseline: "episode", lossWeight: "per-episode" });
    expect(out.map((s) => s.weight)).toEqual([1 / 3, 1 / 3, 1 / 3, 1, 1]);
  });
});
