import { describe, expect, it } from "vitest";
import { environment } from "../../../environments/arith/src/index.ts";
import { scoreReply } from "../../../environments/arith/src/score.ts";
import { playInProcess, solverPolicy } from "../helpers/play-in-process.ts";

const gen = (split: string, seed: number, count = 200) => environment.generateTasks!({ split, seed, count });

describe("arith", () => {
  it("generates the same tasks from the same seed, other tasks from another seed or split", () => {
    expect(gen("train", 5)).toEqual(gen("train", 5));
    expect(gen("train", 5)).not.toEqual(gen("train", 6));
    expect(gen("train", 5)).not.toEqual(gen("test", 5));
  });

  it("keeps single-digit answers in train and two-digit ones in the two-digit split", () => {
    for (const t of gen("train", 1)) expect((t.data as { answer: number }).answer).toBeLessThanOrEqual(9);
    for (const t of gen("train-two-digit", 1)) {
      const a = (t.data as { answer: number }).answer;
      expect(a >= 10 && a <= 99).toBe(true);
    }
  });

  it("asks a short prompt and scores in one turn", async () => {
    const task = { id: "t", split: "train", data: { a: 3, b: 4, op: "+", answer: 7 } };
    const played = await playInProcess(environment, task, () => "7");
    expect(played.turns[0]!.observations["solver"]!.messages).toEqual([{ role: "user", content: "3+4=" }]);
    expect(played.last).toMatchObject({ done: true, rewards: { solver: 1 } });
    expect(played.turns).toHaveLength(2);
  });

  it("gives 1 right, 0.5 the right number with more after it, 0.1 another number first, 0 no number first", () => {
    expect(scoreReply(" 7\n", 7).reward).toBe(1);
    expect(scoreReply("8", 7).reward).toBe(0.1);
    expect(scoreReply("-1", 7).reward).toBe(0.1);
    expect(scoreReply("seven", 7).reward).toBe(0);
    expect(scoreReply("7a", 7).reward).toBe(0.5);
    expect(scoreReply("8a", 7).reward).toBe(0.1);
    expect(scoreReply("a7", 7).reward).toBe(0);
    expect(scoreReply("", 7).reward).toBe(0);
  });

  it("the reference agent scores 1 on every task", async () => {
    for (const task of [...gen("test", 3, 50), ...gen("test-two-digit", 3, 50)]) {
      const played = await playInProcess(environment, task, solverPolicy(environment, task));
      expect(played.last.rewards).toEqual({ solver: 1 });
    }
  });

  it("answers junk, a missing action and bad task data cleanly", async () => {
    const task = gen("test", 1, 1)[0]!;
    expect((await playInProcess(environment, task, () => "\u0000{}")).last.rewards).toEqual({ solver: 0 });
    const ep = environment.createEpisode();
    await ep.reset({ task, seed: 1, builtinAgents: [] });
    expect((await ep.step({ actions: {} })).rewards).toEqual({ solver: 0 });
    const bad = await environment.createEpisode().reset({ task: { id: "x", split: "t", data: null }, seed: 1, builtinAgents: [] });
    expect(bad).toMatchObject({ done: true, rewards: { solver: 0 } });
  });
});
