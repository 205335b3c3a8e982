import { describe, expect, it } from "vitest";
import { RunConfigSchema } from "../../../server/config/run-config.ts";
import { selectTrainingConfig } from "../../../server/training/training-config.ts";

describe("selectTrainingConfig", () => {
  it("takes batching, merging, advantage and the sync timeout from a run config with defaults", () => {
    const config = RunConfigSchema.parse({
      policies: { main: {} },
      environments: [{ name: "smoke", roles: { solver: "main" } }],
      batching: { strategy: "valid-tasks" },
    });
    expect(selectTrainingConfig(config)).toMatchObject({
      batching: { strategy: "valid-tasks", batchTasks: 8, groupSize: 8, maxCachedEpisodes: 4096, filterEqualRewards: true, clientIdleS: 600 },
      merging: { match: "text", ignoreTools: true, overflow: "drop", prefixTree: true },
      advantage: { eps: 1e-6, baseline: "episode", lossWeight: "none" },
      syncTimeoutS: 60,
    });
  });
});
