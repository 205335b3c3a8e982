import { describe, expect, it } from "vitest";
import { evaluateExpression } from "../../../environments/countdown/src/expression.ts";
import { environment } from "../../../environments/countdown/src/index.ts";
import { scoreReply } from "../../../environments/countdown/src/score.ts";
import { playInProcess, solverPolicy } from "../helpers/play-in-process.ts";

const gen = (split: string, seed: number, count = 200) => environment.generateTasks!({ split, seed, count });
const P = { numbers: [3, 5, 2], target: 11, solution: "3+5+2+1" };

describe("countdown", () => {
  it("generates reproducibly from a seed, with solvable targets", () => {
    expect(gen("train", 9)).toEqual(gen("train", 9));
    expect(gen("train", 9)).not.toEqual(gen("train", 10));
    for (const t of [...gen("train", 9), ...gen("train-hard", 9)]) {
      const d = t.data as { numbers: number[]; target: number; solution: string };
      expect(scoreReply(d.solution, d).reward).toBe(1);
    }
    expect(gen("train", 1).every((t) => (t.data as { numbers: number[] }).numbers.length === 2)).toBe(true);
    expect(gen("train-hard", 1).every((t) => (t.data as { numbers: number[] }).numbers.length >= 3)).toBe(true);
  });

  it("parses + - * / and parentheses exactly, without eval", () => {
    expect(evaluateExpression("(3+5)*2")?.value).toEqual({ num: 16, den: 1 });
    expect(evaluateExpression("3/2")?.value).toEqual({ num: 3, den: 2 });
    expect(evaluateExpression("5/(3-3)")?.value).toBeNull();
    expect(evaluateExpression("process.exit()")).toBeNull();
    expect(evaluateExpression("(3+5")).toBeNull();
    expect(evaluateExpression("3++")).toBeNull();
    expect(evaluateExpression("")).toBeNull();
  });

  it("scores 1 correct, 0.1 well-formed but wrong, 0 malformed", () => {
    expect(scoreReply("3*5-2-2", P)).toEqual({ reward: 0.1, verdict: "bad-numbers" });
    expect(scoreReply("3*5-2", { ...P, target: 13 })).toEqual({ reward: 1, verdict: "correct" });
    expect(scoreReply("3*5-2 = 13", { ...P, target: 13 })).toEqual({ reward: 1, verdict: "correct" });
    expect(scoreReply("3+5", P)).toEqual({ reward: 0.1, verdict: "wrong-value" });
    expect(scoreReply("5/(3-3)", { ...P, numbers: [3, 3, 5] })).toEqual({ reward: 0.1, verdict: "division-by-zero" });
    expect(scoreReply("11", P)).toEqual({ reward: 0.1, verdict: "bad-numbers" });
    expect(scoreReply("three", P)).toEqual({ reward: 0, verdict: "malformed" });
  });

  it("plays one turn with a short prompt; the reference agent scores 1", async () => {
    for (const task of gen("test", 2, 50)) {
      const played = await playInProcess(environment, task, solverPolicy(environment, task));
      expect(played.turns[0]!.observations["solver"]!.messages[0]!.content).toMatch(/^\d( \d)+ -> \d+$/);
      expect(played.last.rewards).toEqual({ solver: 1 });
    }
  });

  it("answers junk and bad task data cleanly", async () => {
    const task = gen("test", 1, 1)[0]!;
    expect((await playInProcess(environment, task, () => "\u0000}{")).last.rewards).toEqual({ solver: 0 });
    const bad = await environment.createEpisode().reset({ task: { id: "x", split: "t", data: 3 }, seed: 1, builtinAgents: [] });
    expect(bad).toMatchObject({ done: true, rewards: { solver: 0 } });
  });
});
