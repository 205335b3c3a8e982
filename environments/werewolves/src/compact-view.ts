import type { Ask, AskKind } from "./decisions.ts";
import { PLAYERS } from "./roles.ts";
import type { GameState } from "./state.ts";

/**
 * The compact observation mode (a `-compact` split): each decision is one short, self-contained prompt
 * (under 384 characters) instead of the growing game transcript, so that a model with a 512-token context
 * sees every fact it is given. It holds only what the seat may know, summed up (older nights and votes,
 * the werewolves' talk beyond the first proposal, speeches naming no one are left out). A fixed headline
 * comes first: the living seer claimant, and for a werewolf tonight's first proposed kill (while the
 * werewolves discuss and vote on the kill; `-` otherwise). A fact at a fixed place is one a one-layer model
 * can read by position: with the werewolf's headline one shape for every question, its fellow werewolves'
 * seats sit at fixed places too (measured: the copy of the claimant's seat is learned after ~1,100
 * supervised steps; 2,500 steps did not learn it while the proposal shifted the discussion prompts' lines).
 * Public: who is alive, each speaker's latest speech that names a player, last night's deaths, the last
 * day's votes and who went out. Private: one's role, one's fellow werewolves if a werewolf (and tonight's first proposal
 * at the kill), one's checks if the seer, the night's attack and potions if the witch.
 */

const QUESTIONS: Record<AskKind, string> = {
  discuss: "Wolves' talk: kill whom? Agree?",
  "wolf-vote": "Wolves' kill vote?",
  witch: "",
  seer: "Check whom?",
  hunter: "",
  speech: "Speech: accuse whom?",
  vote: "Day vote: out whom?",
  "last-words": "Out. Accuse whom?",
};

const SEER_CLAIM = /^I am the seer\.\s*(.*)$/;

/** Seats are named by number (Player4 -> 4) to keep the prompt short; replies name them in full. */
const seat = (text: string): string => text.replace(/Player(\d)/g, "$1");

/** One speech as a short public fact, or null when it names no one (then it tells nothing). */
export function summarizeSpeech(speaker: string, text: string): string | null {
  if (!/Player\d/.test(text)) return null;
  const seer = SEER_CLAIM.exec(text);
  if (seer) return seat(`${speaker} claims seer: ${seer[1]!.replace(/ is a werewolf/g, " wolf").replace(/ checked out as good/g, " good").replace(/\.$/, "")}`);
  const accused = [...text.matchAll(/(Player\d) is a (?:were)?wolf/g)].map((m) => m[1]!);
  return accused.length ? seat(`${speaker} accuses ${accused.join(" ")}`) : null;
}

export function compactPrompt(g: GameState, p: string, ask: Ask): string {
  const role = g.roles[p]!;
  const lines: string[] = [];
  // The headline, first and fixed in shape, so a tiny model finds its facts at the same place every time.
  const claimant = [...g.said.entries()].filter(([s, text]) => SEER_CLAIM.test(text) && g.living().includes(s)).at(-1)?.[0];
  // A werewolf's headline always has both fields, so the lines after it start at the same place whatever is asked.
  const night = ask.kind === "discuss" || ask.kind === "wolf-vote";
  const proposal = role === "werewolf" ? ` Proposed kill: ${night && g.wolfProposal ? seat(g.wolfProposal) : "-"}.` : "";
  lines.push(`Seer claim: ${claimant ? seat(claimant) : "-"}.${proposal}`);
  const wolves = role === "werewolf" ? ` (wolves ${seat(PLAYERS.filter((o) => g.roles[o] === "werewolf").join(" "))})` : "";
  lines.push(`You are ${p}, ${role}${wolves}. Round ${g.round}. Alive ${seat(g.living().join(" "))}.`);
  const said = [...g.said.entries()].map(([speaker, text]) => summarizeSpeech(speaker, text)).filter((s): s is string => s !== null);
  if (said.length) lines.push(`Said: ${said.join("; ")}.`);
  if (g.lastNight !== null) lines.push(`Night deaths: ${g.lastNight.length ? seat(g.lastNight.join(" ")) : "none"}.`);
  if (g.lastVote !== null) {
    const { votes, out } = g.lastVote;
    lines.push(seat(`Votes: ${votes.map(([v, to]) => `${v}>${to ?? "-"}`).join(" ")}, ${out ? `${out} out` : "tie"}.`));
  }
  if (role === "seer" && g.seerChecks.size) lines.push(`Your checks: ${[...g.seerChecks].map(([n, w]) => `${seat(n)} ${w ? "wolf" : "good"}`).join(", ")}.`);
  // The witch's and the hunter's questions carry their own facts; the candidates are the reply schema's.
  lines.push(QUESTIONS[ask.kind] || seat(ask.prompt[p]!.split("\n")[0]!.replace(/ Candidates[^.]*\.$/, "")));
  return lines.join("\n");
}
