import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runTraining } from "../../../hub/train/run-training.ts";
import { REPO, removeTempDirs, tempDir } from "../helpers.ts";
import { exampleConfig, quiet, readEvents } from "./helpers.ts";

afterAll(removeTempDirs);

describe("agentjet train: the example configs run end to end on CPU", () => {
  it.each(["werewolves-shared", "werewolves-separate"])("%s: two steps", { timeout: 300_000 }, async (name) => {
    const config = await exampleConfig(name);
    config.run.steps = 2;
    config.eval.every = 0;
    const project = tempDir(`train-${name}`);
    const result = await runTraining({ config, runDir: join(project, "run"), projectDir: project, port: 0, progress: quiet, report: false });
    expect(result.reason).toBe("done");
    for (const v of Object.values(result.versions)) expect(v).toBe(2);
    // Success is reported per trained role: here the werewolves (reward 1 for a werewolf win).
    const steps = readEvents(join(project, "run")).flatMap((e) => (e.type === "step" ? [e] : []));
    for (const s of steps) {
      expect(Object.keys(s.perRole ?? {})).toEqual(["werewolves/werewolf"]);
      expect(s.perRole!["werewolves/werewolf"]!.agents).toBeGreaterThan(0);
    }
  });

  it("cpu-cocktail: a short warm-start and two RL steps on arith mixed with countdown; both environments in every step and evaluation", { timeout: 300_000 }, async () => {
    const config = await exampleConfig("cpu-cocktail");
    config.run.steps = 2;
    config.warmStart!.steps = 20;
    config.warmStart!.tasks = 100;
    config.eval.every = 2;
    config.eval.tasks = 16;
    config.batching.batchTasks = 8;
    const project = tempDir("train-cocktail");
    const result = await runTraining({ config, runDir: join(project, "run"), projectDir: project, port: 0, progress: quiet, report: false });
    expect(result).toMatchObject({ reason: "done", versions: { main: 2 } });
    const events = readEvents(join(project, "run"));
    for (const e of events) if (e.type === "step") expect(Object.keys(e.perEnv).sort()).toEqual(["arith", "countdown"]);
    const evals = events.flatMap((e) => (e.type === "eval" && e.step === 2 ? [`${e.env}/${e.mode}`] : []));
    expect(evals.sort()).toEqual(["arith/greedy", "arith/sampled", "countdown/greedy", "countdown/sampled"]);
  });

  it("math-cocktail (AIME + countdown) is a GPU config: it names an external engine, not the embedded one", async () => {
    const config = await exampleConfig("math-cocktail");
    expect(config.policies.main!.engine.kind).toBe("openai-tokens");
    expect(config.environments.map((e) => e.name)).toEqual(["aime", "countdown"]);
    // Regression (issue 22, item 8): its AIME data path named a file that did not exist. It is resolved
    // against the project directory (the checkout's root); with shared/ beside the checkout, as in CI, it is there.
    const data = config.environments[0]!.options?.["data"];
    expect(typeof data).toBe("string");
    if (existsSync(join(REPO, "..", "shared"))) expect(existsSync(resolve(REPO, data as string))).toBe(true);
  });
});

describe("agentjet train: every shipped example config", () => {
  it.each(readdirSync(join(REPO, "examples")).filter((f) => f.endsWith(".yaml")))("%s is a valid run config", async (file) => {
    await expect(exampleConfig(file.slice(0, -5))).resolves.toMatchObject({ run: { steps: expect.any(Number) } });
  });
});
