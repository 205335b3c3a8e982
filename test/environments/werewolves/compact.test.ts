import { describe, expect, it } from "vitest";
import { summarizeSpeech } from "../../../environments/werewolves/src/compact-view.ts";
import { environment } from "../../../environments/werewolves/src/index.ts";
import { dealRoles, PLAYERS } from "../../../environments/werewolves/src/roles.ts";
import { type Agent, playWith, randomLegalAgent, smartWolfAgent } from "./play.ts";

const GAMES = 400;

/** Werewolves' wins over the first GAMES test-compact tasks, the wolves played by `wolf` (built in when null). */
function wolfWins(wolf: ((game: number, seat: string) => Agent) | null): { wins: number; invalid: number } {
  let wins = 0;
  let invalid = 0;
  environment.generateTasks!({ split: "test-compact", seed: 0, count: GAMES }).forEach((task, i) => {
    const wolves = task.agents!.filter((a) => a.role === "werewolf").map((a) => a.id);
    const agents = wolf ? Object.fromEntries(wolves.map((w) => [w, wolf(i, w)])) : {};
    const info = playWith((task.data as { seed: number }).seed, agents, i + 1, "test-compact").final.info as { winner: string; invalid: number };
    if (info.winner === "werewolves") wins++;
    invalid += info.invalid;
  });
  return { wins, invalid };
}

describe("werewolves: the compact observation mode", () => {
  it("holds the same games as the base split, each decision one fresh self-contained prompt under 384 characters (fits a 512-token context with its reply)", () => {
    const base = environment.generateTasks!({ split: "test", seed: 0, count: 5 });
    const compact = environment.generateTasks!({ split: "test-compact", seed: 0, count: 5 });
    expect(compact.map((t) => (t.data as { seed: number }).seed)).toEqual(base.map((t) => (t.data as { seed: number }).seed));
    expect(compact.every((t) => (t.data as { view?: string }).view === "compact")).toBe(true);
    const task = compact[0]!;
    const roles = dealRoles((task.data as { seed: number }).seed);
    const episode = environment.createEpisode();
    let turn = episode.reset({ task, seed: 1, builtinAgents: [] }) as import("../../../sdk/env/protocol.ts").Turn;
    let longest = 0;
    const agent = smartWolfAgent;
    const other = randomLegalAgent(3);
    let steps = 0;
    while (!turn.done) {
      const actions: Record<string, string> = {};
      for (const [p, obs] of Object.entries(turn.observations)) {
        expect(obs.fresh).toBe(true);
        expect(obs.messages).toHaveLength(1);
        const text = obs.messages[0]!.content;
        longest = Math.max(longest, text.length);
        expect(text).toContain(`You are ${p}`);
        // What no seat may know: another seat's role (only a werewolf's fellow werewolves), another's checks.
        if (roles[p] !== "werewolf") expect(text).not.toMatch(/wolves \d|Proposed kill/);
        if (roles[p] !== "seer") expect(text).not.toContain("Your checks");
        const legal = ((obs.responseFormat?.schema as { properties?: Record<string, { enum?: string[] }> }).properties ?? {});
        const names = Object.values(legal).flatMap((v) => v.enum ?? []);
        const question = text.split("\n").at(-1)!;
        if (question.startsWith("You are the witch")) actions[p] = '{"resurrect": false, "poison": null}';
        else if (question.startsWith("You are the hunter")) actions[p] = '{"shoot": false, "name": null}';
        else if (question.includes("Check whom")) actions[p] = JSON.stringify({ name: names[0] });
        else actions[p] = (roles[p] === "werewolf" ? agent : other)(p, [text], steps, names);
      }
      turn = episode.step({ actions }) as typeof turn;
      expect((turn.info as { invalid?: number } | undefined)?.invalid ?? 0).toBe(0);
      steps++;
    }
    expect(longest).toBeLessThan(384);
  });

  it("sums up only speeches that name a player: seer claims and accusations, the same form for every seat", () => {
    expect(summarizeSpeech("Player4", "I am the seer. Player5 is a werewolf.")).toBe("4 claims seer: 5 wolf");
    expect(summarizeSpeech("Player4", "I am the seer. Player2 and Player3 checked out as good.")).toBe("4 claims seer: 2 and 3 good");
    expect(summarizeSpeech("Player1", "I say Player6 is a werewolf.")).toBe("1 accuses 6");
    expect(summarizeSpeech("Player1", "I am a villager.")).toBeNull();
    expect(summarizeSpeech("Player1", "I have no accusation.")).toBeNull();
  });

  it(`has headroom for a trained werewolf side: random legal < built-in < a hand-written policy (${GAMES} test games each)`, () => {
    const builtin = wolfWins(null);
    const random = wolfWins((i, w) => randomLegalAgent(i * 10 + PLAYERS.indexOf(w as (typeof PLAYERS)[number])));
    const smart = wolfWins(() => smartWolfAgent);
    console.log(`werewolves test-compact, wolves' wins of ${GAMES}: built-in ${builtin.wins}, random legal ${random.wins}, hand-written ${smart.wins}`);
    expect(random.invalid + smart.invalid).toBe(0);
    // Measured: built-in 323 (80.8%), random legal 293 (73.3%), hand-written 388 (97.0%).
    expect(smart.wins).toBeGreaterThan(builtin.wins + 0.1 * GAMES);
    expect(builtin.wins).toBeGreaterThan(random.wins);
  });
});
