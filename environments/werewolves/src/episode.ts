import type { EpisodeDynamics } from "../../../sdk/env/define-environment.ts";
import type { EnvMessage, Observation, ResetRequest, StepRequest, Turn } from "../../../sdk/env/protocol.ts";
import { type Ask, type Decision, fallbackDecision, FORMATS, parseDecision, replySchema } from "./decisions.ts";
import { type Game, playGame } from "./game.ts";
import { systemPrompt } from "./prompts.ts";
import { createRng, deriveSeed, type Rng } from "./rng.ts";
import { dealRoles, PLAYERS } from "./roles.ts";
import { decideByRule } from "./rule-players.ts";
import { GameState } from "./state.ts";

export interface WerewolvesTaskData {
  seed: number;
}

export function taskSeed(data: unknown): number {
  const seed = (data as Partial<WerewolvesTaskData> | null)?.seed;
  if (typeof seed !== "number" || !Number.isInteger(seed)) throw new Error("werewolves task data needs an integer `seed`");
  return seed;
}

/**
 * One game behind the environment protocol. Built-in seats are decided in place; the others are asked
 * through observations. An invalid decision gets one corrective re-prompt, then a legal fallback.
 */
export function createWerewolvesEpisode(): EpisodeDynamics {
  let g: GameState;
  let game: Game;
  let rng: Rng;
  let builtin = new Set<string>();
  let current: Ask | null = null;
  let decided: Record<string, Decision> = {};
  let waiting = new Set<string>();
  const reprompted = new Set<string>();
  const introduced = new Set<string>();
  // Decisions asked of the seats the environment does not play (built-in players never err), in all and per role.
  const counts = { decisions: 0, invalid: 0, reprompts: 0, fallbacks: 0, ignoredActions: 0 };
  let byRole: Record<string, { decisions: number; invalid: number; fallbacks: number }> = {};
  const countFor = (p: string) => (byRole[g.roles[p]!] ??= { decisions: 0, invalid: 0, fallbacks: 0 });

  /** The question, with the JSON schema of its legal replies as the observation's `responseFormat`. */
  const observe = (p: string, question: string, ask: Ask): Observation => {
    const messages: EnvMessage[] = [];
    if (!introduced.has(p)) {
      introduced.add(p);
      const role = g.roles[p]!;
      const mates = role === "werewolf" ? PLAYERS.filter((o) => o !== p && g.roles[o] === "werewolf") : [];
      messages.push({ role: "system", content: systemPrompt(p, role, mates) });
    }
    const news = g.drain(p);
    messages.push({ role: "user", content: [...news, question].join("\n") });
    return { messages, responseFormat: { type: "json_schema", name: `werewolves_${ask.kind.replace("-", "_")}`, schema: replySchema(ask, p) } };
  };

  /** Runs the game until it needs an external decision or ends. */
  const advance = (): Turn => {
    for (;;) {
      if (current && waiting.size === 0) {
        const answers = decided;
        current = null;
        decided = {};
        const r = game.next(answers);
        if (r.done) return finish();
        current = r.value;
      }
      if (!current) {
        const r = game.next({});
        if (r.done) return finish();
        current = r.value;
      }
      waiting = new Set();
      for (const p of current.agents) {
        if (builtin.has(p)) {
          g.drain(p);
          decided[p] = decideByRule(g, current, p, rng);
        } else {
          waiting.add(p);
          counts.decisions++;
          countFor(p).decisions++;
        }
      }
      if (waiting.size > 0) {
        const ask = current;
        return { observations: Object.fromEntries([...waiting].map((p) => [p, observe(p, ask.prompt[p]!, ask)])), done: false };
      }
    }
  };

  const finish = (): Turn => {
    const winner = g.winner ?? "werewolves";
    return {
      observations: {},
      done: true,
      rewards: Object.fromEntries(PLAYERS.map((p) => [p, g.sideOf(p) === winner ? 1 : 0])),
      info: { winner, rounds: g.round, roles: { ...g.roles }, survivors: g.living(), log: g.log, ...counts, byRole },
    };
  };

  return {
    reset(input: ResetRequest): Turn {
      const seed = taskSeed(input.task.data);
      const roles = dealRoles(seed);
      g = new GameState(roles, PLAYERS);
      rng = createRng(deriveSeed(input.seed, "players"));
      builtin = new Set(input.builtinAgents);
      for (const id of builtin) if (!roles[id]) throw new Error(`unknown builtin agent ${id}`);
      game = playGame(g, (tied) => rng.pick(tied));
      current = null;
      decided = {};
      waiting = new Set();
      counts.decisions = counts.invalid = counts.reprompts = counts.fallbacks = counts.ignoredActions = 0;
      byRole = {};
      reprompted.clear();
      introduced.clear();
      return advance();
    },
    step(input: StepRequest): Turn {
      if (!current) throw new Error("step called on a finished game or before reset");
      const ask = current;
      const reprompts: Record<string, Observation> = {};
      for (const agent of Object.keys(input.actions)) if (!waiting.has(agent)) counts.ignoredActions++;
      for (const p of [...waiting]) {
        const parsed = parseDecision(ask, p, input.actions[p] ?? "");
        if (parsed.ok) {
          decided[p] = parsed.decision;
          waiting.delete(p);
          reprompted.delete(p);
          continue;
        }
        counts.invalid++;
        countFor(p).invalid++;
        if (!reprompted.has(p)) {
          reprompted.add(p);
          counts.reprompts++;
          reprompts[p] = observe(p, `Your reply was invalid: ${parsed.reason}. ${FORMATS[ask.kind]}`, ask);
          continue;
        }
        reprompted.delete(p);
        counts.fallbacks++;
        countFor(p).fallbacks++;
        decided[p] = fallbackDecision(ask, p, rng.pick);
        waiting.delete(p);
      }
      // Whoever is still waiting was just re-prompted.
      if (waiting.size > 0) return { observations: reprompts, done: false };
      return advance();
    },
  };
}
