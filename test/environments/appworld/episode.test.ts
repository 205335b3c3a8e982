import type { Server } from "node:http";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppWorldClient, createAppWorldClient } from "../../../environments/appworld/src/appworld-client.ts";
import { createAppWorldEnvironment } from "../../../environments/appworld/src/environment.ts";
import { AppWorldHttpError } from "../../../environments/appworld/src/errors.ts";
import { extractPythonCode } from "../../../environments/appworld/src/extract-code.ts";
import { prepare } from "../../../environments/appworld/src/prepare.ts";
import { computeReward } from "../../../environments/appworld/src/reward.ts";
import { codeBlock, FIXTURE_DATA, startStandIn } from "./helpers.ts";

describe("the AppWorld adapter's episode against the stand-in server", () => {
  let server: Server;
  let client: AppWorldClient;
  const env = () => createAppWorldEnvironment({ client, dataDir: FIXTURE_DATA });

  beforeAll(async () => {
    const s = await startStandIn();
    server = s.server;
    client = createAppWorldClient({ baseUrl: s.baseUrl });
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("takes the first ```python block", () => {
    expect(extractPythonCode("x\n```python\na = 1\n```\n```python\nb = 2\n```")).toBe("a = 1");
    expect(extractPythonCode("```js\nno\n```")).toBeUndefined();
    expect(extractPythonCode("```python\nunclosed")).toBe("unclosed");
  });

  it("resets with the instruction, supervisor and app list; the reference solution scores 1 and closes the world", async () => {
    const episode = env().createEpisode();
    const task = { id: "7a2e9b4_1", split: "train", data: {} };
    const reset = await episode.reset({ task, seed: 3, builtinAgents: [] });
    const [system, user] = reset.observations["solver"]!.messages;
    expect(system!.content).toContain('"name": "todo"');
    expect(user!.content).toContain("Ada Quill");
    expect(user!.content).toContain("Road Trip");
    const action = env().solve!({ task, agent: "solver", messages: [] });
    const end = await episode.step({ actions: { solver: action } });
    expect(end).toMatchObject({ done: true, rewards: { solver: 1 }, info: { success: true, completed: true, steps: 1, num_tests: 2, passed: 2 } });
    await episode.close!();
    await expect(client.execute("7a2e9b4_1", "1")).rejects.toMatchObject({ code: "AJ_ERR_APPWORLD_HTTP", status: 400 });
  });

  it("answers a turn without code with a hint, stops at the step cap and grades partial credit", async () => {
    const episode = env().createEpisode();
    await episode.reset({ task: { id: "5f1c0de_1", split: "train", data: { maxSteps: 3, reward: "partial" } }, seed: 0, builtinAgents: [] });
    const t1 = await episode.step({ actions: { solver: "I think I will just talk." } });
    expect(t1.observations["solver"]!.messages[0]!.content).toMatch(/No ```python code block/);
    const t2 = await episode.step({ actions: { solver: codeBlock("apis.todo.mark_done(task_id=1)\nprint(apis.todo.show_tasks(done=True))") } });
    expect(t2.done).toBe(false);
    expect(t2.observations["solver"]!.messages[0]!.content).toContain('"title": "call the plumber"');
    const t3 = await episode.step({ actions: { solver: codeBlock("print(1)") } });
    expect(t3).toMatchObject({ done: true, rewards: { solver: 0.5 }, info: { success: false, completed: false, steps: 3, passed: 2, num_tests: 4 } });
    await episode.close!();
  });

  it("throws (an infrastructure failure, not a reward) when the server refuses", async () => {
    const episode = env().createEpisode();
    await expect(episode.reset({ task: { id: "nope_1", split: "train", data: {} }, seed: 0, builtinAgents: [] })).rejects.toBeInstanceOf(AppWorldHttpError);
  });

  it("computes binary, partial and AgentJet-shaped rewards", () => {
    const e = (passed: number, total: number) => ({ success: passed === total, difficulty: 1, num_tests: total, passes: Array(passed).fill({ requirement: "r" }), failures: Array(total - passed).fill({ requirement: "f" }) });
    expect([computeReward(e(1, 4), "binary"), computeReward(e(4, 4), "binary")]).toEqual([0, 1]);
    expect(computeReward(e(1, 4), "partial")).toBe(0.25);
    expect(computeReward(e(4, 4), "agentjet")).toBe(1);
    expect(computeReward(e(2, 4), "agentjet")).toBeCloseTo(0.25 / 1.5);
  });

  it("prepare turns datasets/<split>.txt into task lists with the options, and says what to run without data", async () => {
    const out = mkdtempSync(join(tmpdir(), "aj-appworld-prepare-"));
    try {
      const ctx = { pluginDir: out, outDir: out, online: false, log: () => undefined };
      await prepare({ ...ctx, options: { data: FIXTURE_DATA, reward: "partial" } });
      const train = readFileSync(join(out, "appworld-tasks", "train.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as unknown);
      expect(train).toEqual([
        { id: "5f1c0de_1", split: "train", data: { maxSteps: 25, reward: "partial", executionTimeoutS: 100 } },
        { id: "7a2e9b4_1", split: "train", data: { maxSteps: 25, reward: "partial", executionTimeoutS: 100 } },
      ]);
      expect(readFileSync(join(out, "appworld-tasks", "test_challenge.jsonl"), "utf8")).toBe("");
      await expect(prepare({ ...ctx, options: {} })).rejects.toMatchObject({ code: "AJ_ERR_APPWORLD_DATA", message: expect.stringContaining("appworld download data") });
      await expect(prepare({ ...ctx, options: { data: FIXTURE_DATA, reward: "lots" } })).rejects.toThrow(/reward must be one of/);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
