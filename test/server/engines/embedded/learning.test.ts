import { describe, expect, it } from "vitest";
import { Rng } from "../../../../server/engines/embedded/index.ts";
import type { TrainSample } from "../../../../server/training/sample.ts";
import { createSmallEngine } from "./small-engine.ts";

// A toy task: the prompt is "<bos> a + b =" with a, b in 0..4 and the reward is 1 when the first
// generated token is the digit a + b. Ids: 0 <bos>, 1..10 the digits, 11 '+', 12 '=', 13 <eos>.
const BOS = 0;
const PLUS = 11;
const EQ = 12;
const EOS = 13;
const digit = (n: number): number => 1 + n;

const STEPS = 60;
const TASKS = 16;
const GROUP = 8;

describe("embedded engine learning", () => {
  it("raises the mean reward of GRPO steps on single-digit addition", async () => {
    const engine = createSmallEngine({
      vocabSize: 16,
      model: { layers: 1, dim: 32, heads: 2, context: 16, seed: 1 },
      optimizer: { lr: 3e-3, epochs: 2 },
    });
    const rng = new Rng(7);
    const curve: number[] = [];
    for (let step = 0; step < STEPS; step++) {
      const samples: TrainSample[] = [];
      let total = 0;
      for (let k = 0; k < TASKS; k++) {
        const a = Math.floor(rng.next() * 5);
        const b = Math.floor(rng.next() * 5);
        const prompt = [BOS, digit(a), PLUS, digit(b), EQ];
        const group = [];
        for (let g = 0; g < GROUP; g++) {
          const out = await engine.generate(prompt, { maxTokens: 1, temperature: 1, topP: 1, stopIds: [EOS] });
          group.push({ out, reward: out.outputIds[0] === digit(a + b) ? 1 : 0 });
        }
        const rewards = group.map((g) => g.reward);
        total += rewards.reduce((x, y) => x + y, 0);
        const mean = rewards.reduce((x, y) => x + y, 0) / GROUP;
        const std = Math.sqrt(rewards.reduce((x, y) => x + (y - mean) ** 2, 0) / GROUP);
        if (std === 0) continue;
        for (const { out, reward } of group) {
          samples.push({
            tokenIds: [...prompt, ...out.outputIds],
            lossMask: [...prompt.map(() => 0), ...out.outputIds.map(() => 1)],
            logprobs: [...prompt.map(() => 0), ...out.logprobs],
            advantage: (reward - mean) / (std + 1e-6),
            weight: 1,
          });
        }
      }
      curve.push(total / (TASKS * GROUP));
      if (samples.length > 0) await engine.train({ samples });
    }
    let correct = 0;
    for (let a = 0; a < 5; a++) {
      for (let b = 0; b < 5; b++) {
        const out = await engine.generate([BOS, digit(a), PLUS, digit(b), EQ], { maxTokens: 1, temperature: 0, topP: 1, stopIds: [] });
        if (out.outputIds[0] === digit(a + b)) correct++;
      }
    }
    const avg = (xs: number[]): number => xs.reduce((x, y) => x + y, 0) / xs.length;
    const first = avg(curve.slice(0, 5));
    const last = avg(curve.slice(-10));
    console.log(`reward curve: ${curve.map((r) => r.toFixed(2)).join(" ")}; greedy accuracy ${correct}/25`);
    expect(first).toBeLessThan(0.15);
    expect(last).toBeGreaterThan(0.4);
    expect(correct).toBeGreaterThanOrEqual(10);
    // About 10 s on one idle core; the margin is for shared CI machines.
  }, 240_000);
});
