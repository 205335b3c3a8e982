import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { StepEvent } from "../../../hub/train/events.ts";
import { removeTempDirs, runCli, tempDir } from "../helpers.ts";
import { readEvents, tinyArithYaml } from "./helpers.ts";

afterAll(removeTempDirs);

/** GRPO with n = 4 episodes per task: each group's four timelines branch from one prompt. */
const config = (prefixTree: boolean) =>
  tinyArithYaml({
    run: "{ dir: run, seed: 3, steps: 2, checkpointEvery: 100 }",
    modelSeed: 1,
    lr: 0.001,
    batchTasks: 4,
    groupSize: 4,
    rest: `merging: { prefixTree: ${prefixTree} }
clients: { local: 1, concurrency: 8 }
eval: { every: 0 }
`,
  });

describe("agentjet train on prefix tries (merging.prefixTree)", () => {
  it("trains n > 1 branches of one prompt as tries: fewer tokens computed than the flat samples hold", { timeout: 180_000 }, async () => {
    const cwd = tempDir("train-tree");
    writeFileSync(join(cwd, "tree.yaml"), config(true));
    const r = await runCli(["train", "tree.yaml", "--port", "0", "--no-report"], cwd);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/tree 0\.\d\dx/);
    const steps = readEvents(join(cwd, "run")).filter((e): e is StepEvent => e.type === "step");
    expect(steps).toHaveLength(2);
    for (const s of steps) {
      const p = s.perPolicy.main!;
      expect(p.samples).toBeGreaterThanOrEqual(16);
      // Four episodes per task share the task's prompt: the tries compute it once per group.
      expect(p.treeTokens).toBeGreaterThan(0);
      expect(p.treeTokens!).toBeLessThan(p.tokens * 0.75);
    }
  });

  it("trains flat with merging.prefixTree false", { timeout: 180_000 }, async () => {
    const cwd = tempDir("train-tree");
    writeFileSync(join(cwd, "flat.yaml"), config(false));
    const r = await runCli(["train", "flat.yaml", "--port", "0", "--no-report", "--steps", "1"], cwd);
    expect(r.code, r.stderr).toBe(0);
    const steps = readEvents(join(cwd, "run")).filter((e): e is StepEvent => e.type === "step");
    expect(steps).toHaveLength(1);
    expect(steps[0]!.perPolicy.main!.treeTokens).toBeUndefined();
  });
});
