import { describe, expect, it } from "vitest";
import { unboundPolicies } from "../../../hub/run/run-loop.ts";
import { RunConfigSchema } from "../../../server/config/index.ts";

// Regression: a policy no role bound held the run open (it ends when every policy trained run.steps): the
// others trained 54 steps of 1, then it failed blaming the batching strategy or filtering.
describe("unboundPolicies", () => {
  it("names the policies no environment's roles bind (warned at start, and the cause when the run cannot finish)", () => {
    const config = RunConfigSchema.parse({
      policies: { wolf: {}, spare: {} },
      frozen: { opp: { baseUrl: "http://127.0.0.1:1/v1", model: "x" } },
      environments: [{ name: "werewolves", roles: { werewolf: "wolf", "*": "opp" } }],
    });
    expect(unboundPolicies(config)).toEqual(["spare"]);
    expect(unboundPolicies({ ...config, policies: { wolf: config.policies.wolf! } })).toEqual([]);
  });
});
