import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runTraining } from "../../../hub/train/run-training.ts";
import { REPO, removeTempDirs, tempDir } from "../helpers.ts";
import { AIME_DATA, exampleConfig, quiet, readEvents } from "./helpers.ts";

afterAll(removeTempDirs);

describe("agentjet train: the example configs run end to end on CPU", () => {
  it.each(["werewolves-shared", "werewolves-separate"])("%s: two steps", { timeout: 300_000 }, async (name) => {
    const config = await exampleConfig(name);
    config.run.steps = 2;
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

  it.skipIf(AIME_DATA === undefined)("math-cocktail: two steps on the real AIME 2024 problems mixed with countdown", { timeout: 300_000 }, async () => {
    const config = await exampleConfig("math-cocktail");
    config.run.steps = 2;
    const aime = config.environments.find((e) => e.name === "aime")!;
    aime.options = { ...aime.options, data: AIME_DATA };
    const project = tempDir("train-cocktail");
    const result = await runTraining({ config, runDir: join(project, "run"), projectDir: project, port: 0, progress: quiet, report: false });
    expect(result).toMatchObject({ reason: "done", versions: { main: 2 } });
    const envs = new Set(readEvents(join(project, "run")).flatMap((e) => (e.type === "step" ? Object.keys(e.perEnv) : [])));
    expect(envs).toEqual(new Set(["aime", "countdown"]));
  });
});

describe("agentjet train: every shipped example config", () => {
  it.each(readdirSync(join(REPO, "examples")).filter((f) => f.endsWith(".yaml")))("%s is a valid run config", async (file) => {
    await expect(exampleConfig(file.slice(0, -5))).resolves.toMatchObject({ run: { steps: expect.any(Number) } });
  });
});
