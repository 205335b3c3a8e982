import { describe, expect, it } from "vitest";
import { RunConfigSchema } from "../../../server/config/index.ts";
import { type FrozenModel, FrozenUpstreamError } from "../../../server/engines/index.ts";
import type { EnvironmentRuntime } from "../../../plugins/index.ts";
import type { Task } from "../../../sdk/env/index.ts";
import { evaluateSkill } from "../../../hub/train/evaluate-skill.ts";
import type { PreparedEnvironment } from "../../../hub/train/prepare-environments.ts";

const manifest = { name: "one-seat", version: "1.0.0", agents: [{ id: "me", role: "solver" }], reward: { min: 0, max: 1 } };
const tasks: Task[] = ["t0", "t1", "t2"].map((id) => ({ id, split: "test", data: id }));

/** One seat, one question (the task id), reward 1 for any answer; `endless`: a game that never ends. */
function oneSeatEnv(endless = false, asked: string[] = []): PreparedEnvironment {
  const runtime = {
    manifest,
    listTasks: async (split: string) => (asked.push(split), tasks),
    openEpisode: async () => {
      let task = "";
      return {
        kind: "ok" as const,
        value: {
          reset: async (input: { task: Task }) => {
            task = String(input.task.data);
            return { kind: "ok" as const, value: { observations: { me: { messages: [{ role: "user" as const, content: task }] } }, done: false } };
          },
          step: async () =>
            endless
              ? { kind: "ok" as const, value: { observations: { me: { messages: [{ role: "user" as const, content: task }] } }, done: false } }
              : { kind: "ok" as const, value: { observations: {}, done: true, rewards: { me: 1 } } },
          close: async () => {},
        },
      };
    },
  } as unknown as EnvironmentRuntime;
  return { name: "one-seat", installed: { manifest } as unknown as PreparedEnvironment["installed"], runtime, dev: false };
}

describe("evaluation against a frozen opponent", () => {
  it("an endpoint failure fails that episode only (counted in failed, never scored), not the whole evaluation", async () => {
    const config = RunConfigSchema.parse({
      policies: { main: { engine: { kind: "embedded" } } },
      frozen: { opp: { baseUrl: "http://127.0.0.1:1/v1", model: "x" } },
      environments: [{ name: "one-seat", roles: { "*": "opp" } }],
      eval: { every: 1, split: "test", tasks: 3, modes: ["greedy"] },
      clients: { local: 1, concurrency: 1 },
    });
    const opp: FrozenModel = {
      name: "opp",
      model: "x",
      complete: async (body) => {
        const asked = (body.messages as Array<{ content: string }>).at(-1)!.content;
        if (asked === "t1") throw new FrozenUpstreamError("opp", 429, "rate limited");
        return { choices: [{ message: { content: "ok" }, finish_reason: "stop" }] };
      },
    };
    const [event] = await evaluateSkill({ envs: [oneSeatEnv()], config, policies: new Map(), frozen: new Map([["opp", opp]]), step: 0, stage: "rl" });
    expect(event).toMatchObject({ env: "one-seat", episodes: 2, failed: 1, success: 1 });
  });

  // Regression: a game cut off at maxTurns counted as failed (left out of success), while training scores it
  // the bottom of the reward range: evaluation success was inflated.
  it("a game cut off at maxTurns scores the bottom of the reward range, as in training, not failed", async () => {
    const config = RunConfigSchema.parse({
      policies: { main: { engine: { kind: "embedded" } } },
      frozen: { opp: { baseUrl: "http://127.0.0.1:1/v1", model: "x" } },
      environments: [{ name: "one-seat", roles: { "*": "opp" }, maxTurns: 3 }],
      eval: { every: 1, split: "test", tasks: 3, modes: ["greedy"] },
      clients: { local: 1, concurrency: 1 },
    });
    const opp: FrozenModel = { name: "opp", model: "x", complete: async () => ({ choices: [{ message: { content: "ok" }, finish_reason: "stop" }] }) };
    const [event] = await evaluateSkill({ envs: [oneSeatEnv(true)], config, policies: new Map(), frozen: new Map([["opp", opp]]), step: 0, stage: "rl" });
    expect(event).toMatchObject({ env: "one-seat", episodes: 3, failed: 0, success: 0, meanReward: 0 });
  });

  it("plays an environment's evalSplit instead of eval.split, and names it in the event", async () => {
    const config = RunConfigSchema.parse({
      policies: { main: { engine: { kind: "embedded" } } },
      frozen: { opp: { baseUrl: "http://127.0.0.1:1/v1", model: "x" } },
      environments: [{ name: "one-seat", roles: { "*": "opp" }, evalSplit: "test_normal" }],
      eval: { every: 1, split: "test", tasks: 3, modes: ["greedy"] },
      clients: { local: 1, concurrency: 1 },
    });
    const opp: FrozenModel = { name: "opp", model: "x", complete: async () => ({ choices: [{ message: { content: "ok" }, finish_reason: "stop" }] }) };
    const asked: string[] = [];
    const [event] = await evaluateSkill({ envs: [oneSeatEnv(false, asked)], config, policies: new Map(), frozen: new Map([["opp", opp]]), step: 0, stage: "rl" });
    expect(asked).toEqual(["test_normal"]);
    expect(event).toMatchObject({ env: "one-seat", split: "test_normal", episodes: 3 });
  });
});
