import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { onnxAvailable } from "../../../sdk/rewards/onnx-pool.ts";
import { readEvents } from "../../hub/train/helpers.ts";
import { removeTempDirs, tempDir } from "../../hub/helpers.ts";
import { copyPlugin, queryRunDb, trainOnPlugin } from "./helpers.ts";
import { linearScorerOnnx } from "../../helpers/onnx-model.ts";

afterAll(removeTempDirs);

const VOWELS = ["a", "e", "i", "o", "u"];

/** A plugin whose only reward is an ONNX model that likes vowels: sigmoid(#vowels - 2). */
function chatterPlugin(root: string): string {
  const dir = copyPlugin("chatter", root);
  mkdirSync(join(dir, "reward"));
  writeFileSync(join(dir, "reward", "model.onnx"), linearScorerOnnx(VOWELS.map(() => 1), -2));
  writeFileSync(join(dir, "reward", "vocab.json"), JSON.stringify(VOWELS));
  return dir;
}


describe.skipIf(!onnxAvailable())("training on an ONNX reward model (real agentjet train, real onnxruntime-node)", () => {
  it("the model's reward is the only signal, it is recorded with each episode, and training moves it up", { timeout: 240_000 }, async () => {
    const cwd = tempDir("onnx-train");
    const plugin = chatterPlugin(cwd);
    const steps = 12;
    await trainOnPlugin(cwd, { plugin, env: "chatter", seed: 3, steps, batchTasks: 8, groupSize: 8, maxTokens: 6, concurrency: 32, lr: 0.01 });

    const rewards = readEvents(join(cwd, "run"))
      .filter((e) => e.type === "step")
      .map((e) => (e as { perEnv: Record<string, { meanReward: number }> }).perEnv.chatter!.meanReward);
    expect(rewards).toHaveLength(steps);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const first = mean(rewards.slice(0, 4));
    const last = mean(rewards.slice(-4));
    console.log(`onnx reward per step: ${rewards.map((x) => x.toFixed(3)).join(" ")} (first 4 ${first.toFixed(3)}, last 4 ${last.toFixed(3)})`);
    expect(last).toBeGreaterThan(first + 0.1);

    // The report shows the parts: the environment's own 0 and the model's rising score.
    const report = readFileSync(join(cwd, "run", "report.html"), "utf8");
    expect(report).toContain("Reward parts (reward models and judges)");
    expect(report).toMatch(/<td>chatter<\/td><td>style<\/td>/);

    // Every ended episode carries its parts: the environment's 0 and the model's score, whose sum is the reward.
    const rows = queryRunDb<{ rewards: string; metadata: string }>(cwd, "SELECT rewards, metadata FROM episodes WHERE state = 'ended'");
    expect(rows.length).toBeGreaterThanOrEqual(steps * 64);
    for (const row of rows.slice(0, 50)) {
      const parts = (JSON.parse(row.metadata) as { rewardParts: Record<string, { values: Record<string, number> }> }).rewardParts.speaker!.values;
      expect(parts.env).toBe(0);
      expect(JSON.parse(row.rewards).speaker).toBeCloseTo(parts.style!, 9);
    }
  });
});
