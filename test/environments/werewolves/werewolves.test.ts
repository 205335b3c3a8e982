import { describe, expect, it } from "vitest";
import { extractJson } from "../../../environments/werewolves/src/decisions.ts";
import { dealRoles, PLAYERS } from "../../../environments/werewolves/src/roles.ts";
import { environment } from "../../../environments/werewolves/src/index.ts";
import { playWith, simpleAgent } from "./play.ts";

describe("werewolves: rule-based games", () => {
  it("runs 1,000 seeded games to completion with 0 errors and reports the win rate per side", () => {
    const wins = { werewolves: 0, villagers: 0 };
    let rounds = 0;
    for (let seed = 1; seed <= 1000; seed++) {
      const { final } = playWith(seed, {});
      expect(final.done).toBe(true);
      const info = final.info as { winner: "werewolves" | "villagers"; rounds: number; fallbacks: number };
      expect(info.fallbacks).toBe(0);
      wins[info.winner]++;
      rounds += info.rounds;
    }
    console.log(`werewolves: 1000 rule-based games: werewolves won ${wins.werewolves}, villagers won ${wins.villagers}, mean rounds ${(rounds / 1000).toFixed(2)}`);
    expect(wins.werewolves + wins.villagers).toBe(1000);
    expect(wins.werewolves).toBeGreaterThan(0);
    expect(wins.villagers).toBeGreaterThan(0);
  });

  it("gives the same game for the same seed, and another for another seed", () => {
    const external = { Player2: simpleAgent, Player5: simpleAgent };
    const a = playWith(42, external);
    const b = playWith(42, external);
    expect(b.seen).toEqual(a.seen);
    expect(b.final).toEqual(a.final);
    expect(playWith(43, external).final.info).not.toEqual(a.final.info);
  });

  it("deals 3 werewolves, 3 villagers, a seer, a witch and a hunter from the task seed", () => {
    const roles = Object.values(dealRoles(7)).sort();
    expect(roles).toEqual(["hunter", "seer", "villager", "villager", "villager", "werewolf", "werewolf", "werewolf", "witch"]);
    const tasks = environment.generateTasks!({ split: "train", seed: 3, count: 20 });
    expect(new Set(tasks.map((t) => t.id)).size).toBe(20);
    expect(environment.generateTasks!({ split: "train", seed: 3, count: 20 })).toEqual(tasks);
    for (const t of tasks) expect(t.agents?.map((a) => a.role)).toEqual(PLAYERS.map((p) => dealRoles((t.data as { seed: number }).seed)[p]));
  });

  it("rewards each player 1 when its side wins and 0 when it loses", () => {
    const { final } = playWith(5, {});
    const info = final.info as { winner: string; roles: Record<string, string> };
    for (const p of PLAYERS) {
      const side = info.roles[p] === "werewolf" ? "werewolves" : "villagers";
      expect(final.rewards?.[p]).toBe(side === info.winner ? 1 : 0);
    }
  });
});

describe("werewolves: information", () => {
  it("never shows a player private information it may not see", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const all = Object.fromEntries(PLAYERS.map((p) => [p, simpleAgent]));
      const { seen } = playWith(seed, all);
      const roles = dealRoles(seed);
      for (const p of PLAYERS) {
        // Players' public accusations are claims, not roles: only what the game itself says counts here.
        const text = seen[p]!.join("\n").split("\n").filter((l) => !/^Player\d( \(last words\))?: /.test(l)).join("\n");
        const role = roles[p];
        if (role !== "werewolf") {
          expect(text).not.toContain("[werewolves]");
          expect(text).not.toContain("Your fellow werewolves");
        }
        if (role !== "seer") expect(text).not.toContain("Your check:");
        if (role !== "witch") {
          expect(text).not.toContain("was attacked by the werewolves");
          expect(text).not.toMatch(/You (healed|poisoned)/);
        }
        // No one is told another player's role: roles appear only in one's own system prompt.
        for (const o of PLAYERS) if (o !== p && role !== "werewolf" && role !== "seer") expect(text).not.toMatch(new RegExp(`${o} is (a|the) (werewolf|seer|witch|hunter|villager)`));
      }
    }
  });
});

describe("werewolves: invalid decisions", () => {
  it("re-prompts once, then takes a legal fallback and counts it", () => {
    const roles = dealRoles(11);
    const seer = PLAYERS.find((p) => roles[p] === "seer")!;
    let reprompts = 0;
    const { final, seen } = playWith(11, {
      [seer]: (_p, conversation) => {
        if ((conversation[conversation.length - 1] ?? "").includes("invalid")) reprompts++;
        return "I refuse to answer in JSON.";
      },
    });
    const info = final.info as { invalid: number; reprompts: number; fallbacks: number };
    expect(reprompts).toBeGreaterThan(0);
    expect(info.reprompts).toBe(reprompts);
    expect(info.fallbacks).toBe(info.reprompts);
    expect(info.invalid).toBe(2 * info.fallbacks);
    expect(seen[seer]!.some((m) => m.includes("Your reply was invalid"))).toBe(true);
  });

  it("accepts a valid reply after the re-prompt without a fallback", () => {
    const roles = dealRoles(12);
    const seer = PLAYERS.find((p) => roles[p] === "seer")!;
    const { final } = playWith(12, {
      [seer]: (p, conversation, turn, legal) => ((conversation[conversation.length - 1] ?? "").includes("invalid") ? simpleAgent(p, conversation.slice(0, -1), turn, legal) : "garbage"),
    });
    const info = final.info as { reprompts: number; fallbacks: number };
    expect(info.reprompts).toBeGreaterThan(0);
    expect(info.fallbacks).toBe(0);
  });

  it("reads the last JSON object of a reply, and returns null (never loops) on text that starts with }", () => {
    expect(extractJson('I vote {"vote": "Player3"} ok')).toEqual({ vote: "Player3" });
    expect(extractJson("}x")).toBeNull();
    expect(extractJson("}}{")).toBeNull();
  });
});
