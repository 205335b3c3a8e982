import { environment, werewolvesTask } from "../../../environments/werewolves/src/index.ts";
import { PLAYERS } from "../../../environments/werewolves/src/roles.ts";
import type { Turn } from "../../../sdk/env/protocol.ts";
import { createRng } from "../../../environments/werewolves/src/rng.ts";

/** `legal`: the enums of the observation's JSON schema (the names and nulls a reply may use), in order. */
export type Agent = (player: string, conversation: readonly string[], turn: number, legal: ReadonlyArray<string | null>) => string;

export interface Transcript {
  final: Turn;
  /** Every observation's text per player, in order. */
  seen: Record<string, string[]>;
  steps: number;
}

/** Plays one game: `agents` maps the external seats to scripted agents; the others are built in. */
export function playWith(seed: number, agents: Record<string, Agent>, playSeed = seed, split = "test"): Transcript {
  const episode = environment.createEpisode();
  const builtinAgents = PLAYERS.filter((p) => !agents[p]);
  let turn = episode.reset({ task: werewolvesTask(split, seed), seed: playSeed, builtinAgents }) as Turn;
  const seen: Record<string, string[]> = Object.fromEntries(PLAYERS.map((p) => [p, []]));
  let steps = 0;
  while (!turn.done) {
    const actions: Record<string, string> = {};
    for (const [p, obs] of Object.entries(turn.observations)) {
      for (const m of obs.messages) seen[p]!.push(m.content);
      actions[p] = agents[p]!(p, seen[p]!, steps, enums(obs.responseFormat?.schema));
    }
    turn = episode.step({ actions }) as Turn;
    if (++steps > 5000) throw new Error("game did not end");
  }
  return { final: turn, seen, steps };
}

function enums(schema: unknown): Array<string | null> {
  if (!schema || typeof schema !== "object") return [];
  const s = schema as Record<string, unknown>;
  const own = Array.isArray(s.enum) ? (s.enum as Array<string | null>) : [];
  return [...new Set([...own, ...Object.values(s).flatMap((v) => (Array.isArray(v) ? v.flatMap(enums) : enums(v)))])];
}

/** A deterministic agent that answers each question with a legal-looking decision. */
export const simpleAgent: Agent = (player, conversation, turn) => {
  const last = conversation[conversation.length - 1] ?? "";
  const candidates = last.split("\n").findLast((l) => l.includes("Candidates")) ?? "";
  const names = [...candidates.matchAll(/Player\d/g)].map((m) => m[0]).filter((n) => n !== player);
  const pick = names[turn % Math.max(1, names.length)] ?? "Player1";
  if (last.includes('"reach_agreement"')) return `{"kill": "${pick}", "reach_agreement": true}`;
  if (last.includes('"resurrect"')) return '{"resurrect": false, "poison": null}';
  if (last.includes('"shoot"')) return `{"shoot": true, "name": "${pick}"}`;
  if (last.includes('{"name"')) return `{"name": "${pick}"}`;
  if (last.includes('"vote"')) return `{"vote": "${pick}"}`;
  if (last.includes('"accuse"')) return turn % 2 ? `{"accuse": "${pick}"}` : '{"accuse": null}';
  return "I think we should be careful today.";
};

/** A legal move drawn uniformly from the observation's schema (what an untrained constrained policy plays, roughly). */
export function randomLegalAgent(seed: number): Agent {
  const rng = createRng(seed);
  return (_player, conversation, _turn, legal) => {
    const q = (conversation[conversation.length - 1] ?? "").split("\n").at(-1)!;
    const names = legal.filter((n): n is string => n !== null);
    const pick = rng.pick(legal.length ? legal : [null]);
    if (q.includes("Agree?")) return JSON.stringify({ kill: rng.pick(names), reach_agreement: rng.next() < 0.5 });
    if (q.includes("ccuse whom")) return JSON.stringify({ accuse: pick });
    return JSON.stringify({ vote: rng.pick(names) });
  };
}

/** The environment's reference werewolf (`solve`), as a scripted agent: it reads only the compact prompt. */
export const smartWolfAgent: Agent = (player, conversation) =>
  environment.solve!({ task: werewolvesTask("test-compact", 0), agent: player, messages: [{ role: "user", content: conversation.at(-1) ?? "" }] });
