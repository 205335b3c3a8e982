import type { Ask, Decision } from "./decisions.ts";
import type { Rng } from "./rng.ts";
import type { GameState } from "./state.ts";

/**
 * Built-in rule-based players, the frozen opponents and teammates on machines with no LLM. They vote
 * randomly among plausible targets, the seer reveals what she found, the witch heals the first victim.
 * Each uses only what that player may know: its own role, its teammates if a werewolf, its own checks
 * if the seer, and what was said in public.
 */
export function decideByRule(g: GameState, ask: Ask, p: string, rng: Rng): Decision {
  const legal = ask.legal[p] ?? [];
  const role = g.roles[p];
  const knownWolves = (): string[] => {
    const fromChecks = role === "seer" ? [...g.seerChecks].filter(([, w]) => w).map(([n]) => n) : [];
    const claims = role === "werewolf" ? [] : [...g.accused];
    return [...new Set([...fromChecks, ...claims])].filter((n) => legal.includes(n));
  };
  const plausible = (): string[] => {
    if (role === "werewolf") {
      const nonWolves = legal.filter((n) => g.roles[n] !== "werewolf");
      return nonWolves.length ? nonWolves : legal;
    }
    const cleared = role === "seer" ? new Set([...g.seerChecks].filter(([, w]) => !w).map(([n]) => n)) : new Set<string>();
    const open = legal.filter((n) => !cleared.has(n));
    return open.length ? open : legal;
  };
  switch (ask.kind) {
    case "discuss": {
      const proposal = g.wolfProposal;
      if (proposal && legal.includes(proposal)) return { kind: "discuss", speech: `I agree: ${proposal}.`, agree: true };
      const target = rng.pick(legal);
      g.wolfProposal = target;
      return { kind: "discuss", speech: `Let us kill ${target}.`, agree: false };
    }
    case "wolf-vote": {
      const proposal = g.wolfProposal;
      return { kind: "wolf-vote", vote: proposal && legal.includes(proposal) ? proposal : rng.pick(legal) };
    }
    case "witch": {
      if (ask.canHeal) return { kind: "witch", resurrect: true, poison: null };
      const wolves = knownWolves();
      return { kind: "witch", resurrect: false, poison: ask.canPoison && wolves.length ? rng.pick(wolves) : null };
    }
    case "seer": {
      const unchecked = legal.filter((n) => !g.seerChecks.has(n));
      return { kind: "seer", name: rng.pick(unchecked.length ? unchecked : legal) };
    }
    case "hunter": {
      const wolves = knownWolves();
      return { kind: "hunter", shoot: true, name: rng.pick(wolves.length ? wolves : plausible()) };
    }
    case "speech": {
      if (role === "seer") {
        const found = [...g.seerChecks].filter(([n, w]) => w && g.alive.has(n)).map(([n]) => n);
        if (found.length) return { kind: "speech", text: `I am the seer. ${found.map((n) => `${n} is a werewolf`).join(". ")}.` };
        const cleared = [...g.seerChecks].filter(([, w]) => !w).map(([n]) => n);
        return { kind: "speech", text: cleared.length ? `I am the seer. ${cleared.join(" and ")} checked out as good.` : "I have nothing to report yet." };
      }
      return { kind: "speech", text: role === "werewolf" || role === "villager" ? "I am a villager." : "I have no information to share." };
    }
    case "vote": {
      const wolves = knownWolves();
      return { kind: "vote", vote: rng.pick(wolves.length ? wolves : plausible()) };
    }
    case "last-words":
      return { kind: "last-words", text: "Good luck, everyone." };
  }
}
