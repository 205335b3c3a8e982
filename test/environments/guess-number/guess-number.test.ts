import { describe, expect, it } from "vitest";
import { environment } from "../../../environments/guess-number/src/index.ts";
import { type Message, playInProcess, solverPolicy } from "../helpers/play-in-process.ts";

const gen = (split: string, seed: number, count = 100) => environment.generateTasks!({ split, seed, count });
const task = (secret: number) => ({ id: `s${secret}`, split: "test", data: { secret, max: 9, maxTurns: 5 } });

/** Binary search driven by the environment's higher/lower replies. */
function bisect(max: number) {
  return (_agent: string, convo: Message[]): string => {
    let lo = 1;
    let hi = max;
    let last = 0;
    for (const m of convo) {
      if (m.role === "assistant") last = Number(m.content);
      else if (m.content === "higher") lo = last + 1;
      else if (m.content === "lower") hi = last - 1;
    }
    return String(Math.floor((lo + hi) / 2));
  };
}

describe("guess-number", () => {
  it("generates reproducibly from a seed", () => {
    expect(gen("train", 4)).toEqual(gen("train", 4));
    expect(gen("train", 4)).not.toEqual(gen("train", 5));
    expect(gen("train-wide", 4).every((t) => (t.data as { max: number }).max === 99)).toBe(true);
  });

  it("answers higher and lower over several turns, one agent", async () => {
    const played = await playInProcess(environment, task(7), bisect(9));
    const said = played.turns.flatMap((t) => t.observations["guesser"]?.messages.map((m) => m.content) ?? []);
    expect(said).toEqual(["guess 1-9", "higher"]);
    expect(played.conversations["guesser"]!.filter((m) => m.role === "assistant").map((m) => m.content)).toEqual(["5", "7"]);
    expect(played.last).toMatchObject({ done: true, info: { won: true, turns: 2 } });
    expect(played.last.rewards!["guesser"]).toBeCloseTo(0.9);
  });

  it("binary search always wins within the turn limit", async () => {
    for (const t of [...gen("test", 1), ...gen("test-wide", 1)]) {
      const played = await playInProcess(environment, t, bisect((t.data as { max: number }).max));
      expect(played.last.info?.["won"]).toBe(true);
    }
  });

  it("the reference agent wins in one turn: the top reward", async () => {
    for (const t of gen("test", 2, 30)) {
      expect((await playInProcess(environment, t, solverPolicy(environment, t))).last.rewards).toEqual({ guesser: 1 });
    }
  });

  it("shapes a loss by the share of well-formed guesses; junk earns 0, never a throw", async () => {
    const wrongButWellFormed = await playInProcess(environment, task(9), () => "1");
    expect(wrongButWellFormed.last).toMatchObject({ done: true, rewards: { guesser: 0.1 }, info: { won: false, turns: 5 } });
    const junk = await playInProcess(environment, task(9), () => "\u0000 nope");
    expect(junk.last.rewards).toEqual({ guesser: 0 });
    expect(junk.turns[1]!.observations["guesser"]!.messages[0]!.content).toBe("a number");
    const bad = await environment.createEpisode().reset({ task: { id: "x", split: "t", data: { secret: 50, max: 9, maxTurns: 5 } }, seed: 1, builtinAgents: [] });
    expect(bad).toMatchObject({ done: true, rewards: { guesser: 0 } });
  });
});
