import { type Ask, type AskKind, type Decision, FORMATS } from "./decisions.ts";
import type { GameState } from "./state.ts";

/** A game runs as a generator: it yields each question and receives the decisions of those asked. */
export type Game = Generator<Ask, void, Record<string, Decision>>;

export const ROUND_CAP = 7;
const DISCUSSION_ROUNDS_PER_WOLF = 2;

function ask(kind: AskKind, agents: string[], question: (p: string) => string, legal: (p: string) => string[], extra: Partial<Ask> = {}): Ask {
  return {
    kind,
    agents,
    prompt: Object.fromEntries(agents.map((p) => [p, `${question(p)}\n${FORMATS[kind]}`])),
    legal: Object.fromEntries(agents.map((p) => [p, legal(p)])),
    ...extra,
  };
}

/** Majority of votes; a tie is broken by `tieBreak` (wolves' kill) or gives no one (`null`). */
function tally(votes: readonly string[], tieBreak: ((tied: string[]) => string) | null): string | null {
  const counts = new Map<string, number>();
  for (const v of votes) counts.set(v, (counts.get(v) ?? 0) + 1);
  const top = Math.max(0, ...counts.values());
  const tied = [...counts.entries()].filter(([, n]) => n === top).map(([p]) => p).sort();
  if (tied.length === 1) return tied[0]!;
  return tied.length > 1 && tieBreak ? tieBreak(tied) : null;
}

function list(names: readonly string[]): string {
  return names.length ? names.join(", ") : "no one";
}

export function* playGame(g: GameState, tieBreak: (tied: string[]) => string): Game {
  for (g.round = 1; g.round <= ROUND_CAP; g.round++) {
    const living = g.living();
    g.tell(living, `Night ${g.round}. Living: ${list(living)}.`);

    // Night: the werewolves discuss (up to 2 rounds per wolf, stopping early on agreement), then vote.
    const wolves = g.livingWith("werewolf");
    g.wolfProposal = null;
    const targets = living.filter((p) => g.roles[p] !== "werewolf");
    const agreed = new Map<string, boolean>();
    discussion: for (let r = 0; r < DISCUSSION_ROUNDS_PER_WOLF; r++) {
      for (const w of wolves) {
        const d = (yield ask("discuss", [w], () => r === 0 && !agreed.has(w) ? `Werewolves' discussion: whom to kill tonight? Candidates: ${list(targets)}.` : "Werewolves' discussion, again: whom to kill?", () => targets))[w];
        if (d?.kind !== "discuss") continue;
        agreed.set(w, d.agree);
        g.wolfProposal ??= targets.find((t) => d.speech.includes(t)) ?? null;
        g.tell(wolves.filter((o) => o !== w), `[werewolves] ${w}: ${d.speech}${d.agree ? " (agrees)" : ""}`);
        if (wolves.every((o) => agreed.get(o) === true)) break discussion;
      }
    }
    const kill = yield ask("wolf-vote", wolves, () => "Werewolves' vote: whom to kill tonight?", () => targets);
    const victim = tally(wolves.map((w) => (kill[w]?.kind === "wolf-vote" ? kill[w].vote : "")).filter(Boolean), tieBreak);
    if (victim) g.tell(wolves, `[werewolves] The werewolves chose to kill ${victim}.`);

    // The witch: one heal (not on herself); if she did not heal, her one poison.
    let killed = victim;
    let poisoned: string | null = null;
    const [witch] = g.livingWith("witch");
    if (witch && (!g.healUsed || !g.poisonUsed)) {
      const canHeal = !g.healUsed && victim !== null && victim !== witch;
      const others = living.filter((p) => p !== witch);
      const q = () =>
        `You are the witch. ${victim ? `Tonight ${victim} was attacked by the werewolves.` : "No one was attacked tonight."} ` +
        `Healing potion: ${canHeal ? "available" : g.healUsed ? "used" : "cannot be used on this victim"}. Poison: ${g.poisonUsed ? "used" : "available"}. Candidates for poison: ${list(others)}.`;
      const d = (yield ask("witch", [witch], q, () => others, { canHeal, canPoison: !g.poisonUsed }))[witch];
      if (d?.kind === "witch") {
        if (d.resurrect && canHeal) {
          killed = null;
          g.healUsed = true;
          g.tell([witch], `You healed ${victim}.`);
        } else if (d.poison && !g.poisonUsed) {
          poisoned = d.poison;
          g.poisonUsed = true;
          g.tell([witch], `You poisoned ${d.poison}.`);
        }
      }
    }

    // The seer checks one player and learns that player's side.
    const [seer] = g.livingWith("seer");
    if (seer) {
      const candidates = living.filter((p) => p !== seer);
      const d = (yield ask("seer", [seer], () => `You are the seer. Choose one player to check. Candidates: ${list(candidates)}.`, () => candidates))[seer];
      if (d?.kind === "seer") {
        const isWolf = g.roles[d.name] === "werewolf";
        g.seerChecks.set(d.name, isWolf);
        g.tell([seer], `Your check: ${d.name} is ${isWolf ? "a werewolf" : "not a werewolf"}.`);
      }
    }

    // Dawn.
    const deaths = [...new Set([killed, poisoned].filter((p): p is string => p !== null))].sort();
    for (const p of deaths) g.kill(p);
    g.record("night", `deaths: ${list(deaths)}`);
    g.lastNight = deaths;
    g.tell(g.seats, `Day ${g.round}. ${deaths.length ? `${list(deaths)} died last night.` : "No one died last night."}`);
    const hunterKilledAtNight = deaths.find((p) => g.roles[p] === "hunter" && p !== poisoned);
    if (hunterKilledAtNight) yield* hunterShot(g, hunterKilledAtNight, "night");
    if (g.round === 1 && killed) yield* lastWords(g, killed);
    if ((g.winner = g.checkWin())) return;

    // Day: each living player speaks once, in seat order, then everyone votes.
    for (const p of g.living()) {
      const others = g.living().filter((o) => o !== p);
      const d = (yield ask("speech", [p], () => `Day ${g.round}: your speech. Candidates to accuse: ${list(others)}.`, () => others))[p];
      if (d?.kind !== "speech") continue;
      g.noteSpeech(p, d.text);
      g.tell(g.living().filter((o) => o !== p), `${p}: ${d.text}`);
    }
    const voters = g.living();
    const votes = yield ask("vote", voters, (p) => `Day vote: whom to eliminate? Candidates: ${list(voters.filter((o) => o !== p))}.`, (p) => voters.filter((o) => o !== p));
    const cast = voters.map((v) => (votes[v]?.kind === "vote" ? votes[v].vote : "")).filter(Boolean);
    g.tell(g.seats, `Votes: ${voters.map((v) => `${v}->${votes[v]?.kind === "vote" ? votes[v].vote : "none"}`).join(", ")}.`);
    const out = tally(cast, null);
    g.lastVote = { votes: voters.map((v) => [v, votes[v]?.kind === "vote" ? votes[v].vote : null] as const), out };
    if (out) {
      g.kill(out);
      g.record("day", `voted out: ${out}`);
      g.tell(g.seats, `${out} was voted out.`);
      yield* lastWords(g, out);
      if (g.roles[out] === "hunter") yield* hunterShot(g, out, "day");
    } else {
      g.tell(g.seats, "The vote was tied: no one was voted out.");
    }
    if ((g.winner = g.checkWin())) return;
  }
  g.round = ROUND_CAP;
  // Reaching the round cap is a loss for the good side.
  g.winner = "werewolves";
}

function* lastWords(g: GameState, p: string): Game {
  const d = (yield ask("last-words", [p], () => `You are out. Your last words. Candidates to accuse: ${list(g.living())}.`, () => g.living()))[p];
  if (d?.kind === "last-words") {
    g.noteSpeech(p, d.text);
    g.tell(g.living(), `${p} (last words): ${d.text}`);
  }
}

function* hunterShot(g: GameState, hunter: string, phase: "night" | "day"): Game {
  const targets = g.living().filter((p) => p !== hunter);
  if (targets.length === 0) return;
  const d = (yield ask("hunter", [hunter], () => `You are the hunter and you have died. You may shoot one living player. Candidates: ${list(targets)}.`, () => targets))[hunter];
  if (d?.kind === "hunter" && d.shoot && d.name) {
    g.kill(d.name);
    g.record(phase, `${hunter} shot ${d.name}`);
    g.tell(g.seats, `${hunter} (the hunter) shot ${d.name}.`);
  }
}
