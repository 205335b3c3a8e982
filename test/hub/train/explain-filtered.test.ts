import { describe, expect, it } from "vitest";
import { explainFiltered } from "../../../hub/train/explain-filtered.ts";
import type { StepReport } from "../../../server/training/index.ts";

function report(over: Partial<StepReport>): StepReport {
  return {
    policy: "main", step: 0, outcome: "no-signal", versionBefore: 0, versionAfter: 0, episodes: 8, episodeIds: [], samples: 8, groups: 2,
    droppedGroups: [], groupsPerEnv: {}, abandoned: 0, tokens: 40, lossTokens: 20, sampleVersions: { min: 0, max: 0 }, meanReward: 0, ...over,
  };
}

describe("explainFiltered", () => {
  it("names every reward the dropped groups shared", () => {
    const why = explainFiltered([report({ droppedGroups: [{ group: "arith/t", env: "arith", taskId: "t", reward: 0, episodes: 4 }] })]);
    expect(why).toMatch(/^all 1 group\(s\) had equal rewards within the group \(1 at reward 0\): the policy never succeeds/);
  });

  // A trainer that was down (or refused every step) made the run fail with "no group reached the trainer":
  // the groups did reach it, and its answer is the reason.
  it("a step that failed is the reason, with its engine's error", () => {
    const failed = report({ outcome: "failed", error: "POST http://127.0.0.1:8800/v1/train_step: fetch failed (ECONNREFUSED)" });
    expect(explainFiltered([failed])).toBe("the training step of 'main' failed: POST http://127.0.0.1:8800/v1/train_step: fetch failed (ECONNREFUSED)");
    expect(explainFiltered([report({})])).toBe("no group reached the trainer");
  });

  it("a policy whose batches held no sample is named (its agents made no trainable call)", () => {
    expect(explainFiltered([report({ policy: "po", samples: 0, episodes: 8 })])).toMatch(/^no samples for 'po': its agents made no trainable call/);
  });
});
