import type { EpisodeDynamics } from "../../../sdk/env/define-environment.ts";
import type { EnvMessage, Observation, ResetRequest, StepRequest, Turn } from "../../../sdk/env/protocol.ts";
import { type Ask, type Decision, fallbackDecision, FORMATS, parseDecision, replySchema } from "./decisions.ts";
import { compactPrompt } from "./compact-view.ts";
import { type Game, playGame } from "./game.ts";
import { systemPrompt } from "./prompts.ts";
import { createRng, deriveSeed, type Rng } from "./rng.ts";
import { dealRoles, PLAYERS } from "./roles.ts";
import { decideByRule } from "./rule-players.ts";
import { GameState } from "./state.ts";

export interface WerewolvesTaskData {
  seed: number;
  /** `compact`: every observation is one self-contained short prompt (see compact-view.ts); absent: the transcript. */
  view?: "compact";
}

function isCompact(data: unknown): boolean {
  return (data as Partial<WerewolvesTaskData> | null)?.view === "compact";
}

export function taskSeed(data: unknown): number {
  const seed = (data as Partial<WerewolvesTaskData> | null)?.seed;
  if (typeof seed !== "number" || !Number.isInteger(seed)) throw new Error("werewolves task data needs an integer `seed`");
  return seed;
}

interface RoleCounts {
  decisions: number;
  invalid: number;
  fallbacks: number;
}

/** What one game remembers between protocol calls. */
interface Episode {
  g: GameState;
  game: Game;
  rng: Rng;
  builtin: Set<string>;
  compact: boolean;
  /** The decision the game waits for, or null before the first and after the last. */
  current: Ask | null;
  decided: Record<string, Decision>;
  waiting: Set<string>;
  reprompted: Set<string>;
  introduced: Set<string>;
  // Decisions asked of the seats the environment does not play (built-in players never err), in all and per role.
  counts: { decisions: number; invalid: number; reprompts: number; fallbacks: number; ignoredActions: number };
  byRole: Record<string, RoleCounts>;
}

/** A fresh game for a reset: roles dealt from the task's seed, built-in players seeded from the episode's (compact: the task's). */
function startEpisode(input: ResetRequest): Episode {
  const seed = taskSeed(input.task.data);
  const roles = dealRoles(seed);
  const g = new GameState(roles, PLAYERS);
  // Compact games seed the built-in players from the task, so every episode of a task (a GRPO group, an
  // evaluation at each step) meets the same dice: outcomes differ by the external seats' choices only.
  const compact = isCompact(input.task.data);
  const rng = createRng(deriveSeed(compact ? seed : input.seed, "players"));
  const builtin = new Set(input.builtinAgents);
  for (const id of builtin) if (!roles[id]) throw new Error(`unknown builtin agent ${id}`);
  return {
    g,
    game: playGame(g, (tied) => rng.pick(tied)),
    rng,
    builtin,
    compact,
    current: null,
    decided: {},
    waiting: new Set(),
    reprompted: new Set(),
    introduced: new Set(),
    counts: { decisions: 0, invalid: 0, reprompts: 0, fallbacks: 0, ignoredActions: 0 },
    byRole: {},
  };
}

function countFor(e: Episode, p: string): RoleCounts {
  return (e.byRole[e.g.roles[p]!] ??= { decisions: 0, invalid: 0, fallbacks: 0 });
}

/** The question, with the JSON schema of its legal replies as the observation's `responseFormat`. */
function observe(e: Episode, p: string, question: string, ask: Ask, reprompt = false): Observation {
  const responseFormat = { type: "json_schema" as const, name: `werewolves_${ask.kind.replace("-", "_")}`, schema: replySchema(ask, p) };
  if (e.compact) {
    e.g.drain(p);
    const content = compactPrompt(e.g, p, ask) + (reprompt ? `\n${question}` : "");
    return { messages: [{ role: "user", content }], fresh: true, responseFormat };
  }
  const messages: EnvMessage[] = [];
  if (!e.introduced.has(p)) {
    e.introduced.add(p);
    const role = e.g.roles[p]!;
    const mates = role === "werewolf" ? PLAYERS.filter((o) => o !== p && e.g.roles[o] === "werewolf") : [];
    messages.push({ role: "system", content: systemPrompt(p, role, mates) });
  }
  const news = e.g.drain(p);
  messages.push({ role: "user", content: [...news, question].join("\n") });
  return { messages, responseFormat };
}

/** Built-in seats of the current ask decide in place; the others are now waited for. */
function seatAsk(e: Episode, ask: Ask): void {
  e.waiting = new Set();
  for (const p of ask.agents) {
    if (e.builtin.has(p)) {
      e.g.drain(p);
      e.decided[p] = decideByRule(e.g, ask, p, e.rng);
    } else {
      e.waiting.add(p);
      e.counts.decisions++;
      countFor(e, p).decisions++;
    }
  }
}

/** Runs the game until it needs an external decision or ends. */
function advance(e: Episode): Turn {
  for (;;) {
    if (e.current && e.waiting.size === 0) {
      const answers = e.decided;
      e.current = null;
      e.decided = {};
      const r = e.game.next(answers);
      if (r.done) return finalTurn(e);
      e.current = r.value;
    }
    if (!e.current) {
      const r = e.game.next({});
      if (r.done) return finalTurn(e);
      e.current = r.value;
    }
    const ask = e.current;
    seatAsk(e, ask);
    if (e.waiting.size > 0) {
      return { observations: Object.fromEntries([...e.waiting].map((p) => [p, observe(e, p, ask.prompt[p]!, ask)])), done: false };
    }
  }
}

function finalTurn(e: Episode): Turn {
  const { g } = e;
  const winner = g.winner ?? "werewolves";
  return {
    observations: {},
    done: true,
    rewards: Object.fromEntries(PLAYERS.map((p) => [p, g.sideOf(p) === winner ? 1 : 0])),
    info: { winner, rounds: g.round, roles: { ...g.roles }, survivors: g.living(), log: g.log, ...e.counts, byRole: e.byRole },
  };
}

/**
 * Takes the waited-for seats' replies: a valid one is decided; a first invalid one is re-prompted (returned
 * here, the seat keeps waiting); a second gets a legal fallback.
 */
function takeReplies(e: Episode, ask: Ask, input: StepRequest): Record<string, Observation> {
  const reprompts: Record<string, Observation> = {};
  for (const agent of Object.keys(input.actions)) if (!e.waiting.has(agent)) e.counts.ignoredActions++;
  for (const p of [...e.waiting]) {
    const parsed = parseDecision(ask, p, input.actions[p] ?? "");
    if (parsed.ok) {
      e.decided[p] = parsed.decision;
      e.waiting.delete(p);
      e.reprompted.delete(p);
      continue;
    }
    e.counts.invalid++;
    countFor(e, p).invalid++;
    if (!e.reprompted.has(p)) {
      e.reprompted.add(p);
      e.counts.reprompts++;
      reprompts[p] = observe(e, p, `Your reply was invalid: ${parsed.reason}. ${FORMATS[ask.kind]}`, ask, true);
      continue;
    }
    e.reprompted.delete(p);
    e.counts.fallbacks++;
    countFor(e, p).fallbacks++;
    e.decided[p] = fallbackDecision(ask, p, e.rng.pick);
    e.waiting.delete(p);
  }
  return reprompts;
}

/**
 * One game behind the environment protocol. Built-in seats are decided in place; the others are asked
 * through observations. An invalid decision gets one corrective re-prompt, then a legal fallback.
 */
export function createWerewolvesEpisode(): EpisodeDynamics {
  let episode: Episode | null = null;
  return {
    reset(input: ResetRequest): Turn {
      episode = startEpisode(input);
      return advance(episode);
    },
    step(input: StepRequest): Turn {
      if (!episode?.current) throw new Error("step called on a finished game or before reset");
      const reprompts = takeReplies(episode, episode.current, input);
      // Whoever is still waiting was just re-prompted.
      if (episode.waiting.size > 0) return { observations: reprompts, done: false };
      return advance(episode);
    },
  };
}
