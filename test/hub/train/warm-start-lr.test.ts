import { describe, expect, it } from "vitest";
import { RunConfigSchema } from "../../../server/config/index.ts";
import { rlAfterWarmStartWarning } from "../../../hub/train/warm-start.ts";

const config = (optimizer: Record<string, unknown> | undefined, warmStart: Record<string, unknown> | undefined) =>
  RunConfigSchema.parse({
    policies: { main: { engine: { kind: "embedded" }, ...(optimizer ? { optimizer } : {}) } },
    environments: [{ name: "arith", roles: { solver: "main" } }],
    ...(warmStart ? { warmStart } : {}),
  });

describe("RL after a warm start", () => {
  it("warns when the policy's lr is not below the warm start's (the default is not)", () => {
    expect(rlAfterWarmStartWarning(config(undefined, { steps: 10 }), "main")).toBe(
      "policies.main.optimizer.lr (0.003) is not below warmStart.lr (0.003): RL steps that large can undo the warm start (the examples use 10x lower, e.g. optimizer: { lr: 0.0003 })",
    );
    expect(rlAfterWarmStartWarning(config({ lr: 0.01 }, { steps: 10, lr: 0.003 }), "main")).toContain("(0.01) is not below warmStart.lr (0.003)");
  });

  it("says nothing for the examples' setting, or without a warm start", () => {
    expect(rlAfterWarmStartWarning(config({ lr: 0.0003 }, { steps: 10 }), "main")).toBeNull();
    expect(rlAfterWarmStartWarning(config(undefined, undefined), "main")).toBeNull();
  });
});
