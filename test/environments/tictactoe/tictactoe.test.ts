import { describe, expect, it } from "vitest";
import { environment } from "../../../environments/tictactoe/src/index.ts";
import { playInProcess, solverPolicy } from "../helpers/play-in-process.ts";

const gen = (split: string, seed: number, count = 50) => environment.generateTasks!({ split, seed, count });
const EMPTY = { id: "empty", split: "test", data: { moves: [] } };

describe("tictactoe", () => {
  it("generates reproducibly from a seed", () => {
    expect(gen("train", 3)).toEqual(gen("train", 3));
    expect(gen("train", 3)).not.toEqual(gen("train", 4));
  });

  it("lets two trained agents take turns, x first, each seeing the board", async () => {
    const order: string[] = [];
    const moves: Record<string, string[]> = { x: ["1", "2", "3"], o: ["4", "5"] };
    const played = await playInProcess(environment, EMPTY, (agent) => {
      order.push(agent);
      return moves[agent]!.shift()!;
    });
    expect(order).toEqual(["x", "o", "x", "o", "x"]);
    for (const t of played.turns.slice(0, -1)) expect(Object.keys(t.observations)).toHaveLength(1);
    expect(played.turns[0]!.observations["x"]!.messages[0]!.content).toBe(".../.../... you x, move 1-9");
    expect(played.last).toMatchObject({ done: true, rewards: { x: 1, o: 0.2 }, info: { winner: "x", board: "xxx/oo./..." } });
  });

  it("plays a built-in seat itself: only the trained seat is asked", async () => {
    const asked = new Set<string>();
    const played = await playInProcess(environment, EMPTY, (agent, convo) => {
      asked.add(agent);
      return environment.solve!({ task: EMPTY, agent, messages: convo });
    }, { builtinAgents: ["o"], seed: 11 });
    expect([...asked]).toEqual(["x"]);
    expect(played.last.done).toBe(true);
    const both = await playInProcess(environment, EMPTY, () => "1", { builtinAgents: ["x", "o"] });
    expect(both.turns).toHaveLength(1);
    expect(both.last.done).toBe(true);
  });

  it("the reference agent never loses to the rule-based opponent, and reaches the top reward", async () => {
    const rewards: number[] = [];
    // A random opening can leave o already lost, so o is checked from the empty board only.
    const tasks = gen("test", 5, 40);
    for (const [i, task] of [...tasks, ...Array.from({ length: 10 }, () => EMPTY)].entries()) {
      const seats = (task.data as { moves: number[] }).moves.length === 0 ? (["x", "o"] as const) : (["x"] as const);
      for (const seat of seats) {
        const builtin = seat === "x" ? ["o"] : ["x"];
        const played = await playInProcess(environment, task, solverPolicy(environment, task), { builtinAgents: builtin, seed: i });
        const r = played.last.rewards![seat]!;
        expect(r).toBeGreaterThanOrEqual(0.5);
        rewards.push(r);
      }
    }
    expect(Math.max(...rewards)).toBe(1);
  });

  it("ends on an illegal move: the mover scores 0, never a throw", async () => {
    const malformed = await playInProcess(environment, EMPTY, () => "\u0000 take the centre", { builtinAgents: ["o"] });
    expect(malformed.last).toMatchObject({ done: true, rewards: { x: 0, o: 1 }, info: { forfeit: "x", error: "malformed move" } });
    const taken = await playInProcess(environment, EMPTY, () => "5", { builtinAgents: ["o"] });
    expect(taken.last).toMatchObject({ done: true, rewards: { x: 0 }, info: { error: "cell taken" } });
    const bad = await environment.createEpisode().reset({ task: { id: "b", split: "t", data: { moves: [1] } }, seed: 1, builtinAgents: [] });
    expect(bad).toMatchObject({ done: true, rewards: { x: 0, o: 0 } });
  });
});
