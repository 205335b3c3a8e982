import type { PolicyRuntime } from "../../server/app/index.ts";
import type { RunConfig } from "../../server/config/index.ts";
import { type FrozenModel, FrozenUpstreamError } from "../../server/engines/index.ts";
import { type ChatTurnMessage, promptIds } from "../../server/tokenizers/index.ts";
import { createJsonMask, toJsonGrammar } from "../../server/openai/index.ts";
import type { ResponseFormat, Task } from "../../sdk/env/index.ts";
import { playEpisode } from "../conformance/play-episode.ts";
import { resolveSeats, seatsOf } from "../scheduler/resolve-seats.ts";
import type { EvalEvent } from "./events.ts";
import type { PreparedEnvironment } from "./prepare-environments.ts";
import { isSuccess } from "./step-stats.ts";

export type EvalMode = "greedy" | "sampled";
type History = Array<{ role: "system" | "user" | "assistant"; content: string }>;

export interface SkillEvalOptions {
  envs: readonly PreparedEnvironment[];
  config: RunConfig;
  policies: ReadonlyMap<string, PolicyRuntime>;
  frozen: ReadonlyMap<string, FrozenModel>;
  /** The step the weights are at (0 before RL). */
  step: number;
  /** `init`: before the warm-start; `rl` otherwise. */
  stage: "init" | "rl";
  /** Episodes played at once (default: the config's client concurrency). */
  concurrency?: number;
}

/** Shares at or above this of one answer, with success below one half, mark a collapsed policy. */
export const COLLAPSE_SHARE = 0.5;

/**
 * Measures skill on the eval split: each task played once per mode (greedy, sampled at the eval
 * temperature), in-process, straight against the policies' engines, so nothing of it is recorded or
 * trained. Success is the share of episodes whose trained agents reached the top reward; the most common
 * final answer of the trained agents shows a policy that answers the same thing to everything.
 */
export async function evaluateSkill(o: SkillEvalOptions): Promise<EvalEvent[]> {
  const { config } = o;
  const out: EvalEvent[] = [];
  for (const mode of config.eval.modes) {
    const temperature = mode === "greedy" ? 0 : (config.eval.temperature ?? config.sampling.temperature);
    for (const env of o.envs) out.push(await evaluateEnv(o, env, mode, temperature));
  }
  return out;
}

interface Played {
  reward: number;
  answer: string;
  failed: boolean;
  /** Per trained role: rewards of its agents, and the decisions counted in `info` (werewolves). */
  roles: Array<{ role: string; reward: number }>;
  info: Record<string, unknown>;
}

async function evaluateEnv(o: SkillEvalOptions, env: PreparedEnvironment, mode: EvalMode, temperature: number): Promise<EvalEvent> {
  const { config } = o;
  const entry = config.environments.find((e) => e.name === env.name)!;
  const top = env.installed.manifest.reward.max;
  const split = entry.evalSplit ?? config.eval.split;
  const tasks = (await env.runtime.listTasks(split)).slice(0, config.eval.tasks);
  const known = { policies: [...o.policies.keys()], frozen: [...o.frozen.keys()] };
  const played: Played[] = new Array(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < tasks.length; i = next++) played[i] = await playOne(o, env, entry.roles, entry.maxTurns, tasks[i]!, i, mode, temperature, known);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency ?? config.clients.concurrency, tasks.length)) }, worker));
  const done = played.filter((p) => !p.failed);
  const answers = new Map<string, number>();
  for (const p of done) answers.set(p.answer, (answers.get(p.answer) ?? 0) + 1);
  const [topAnswer, topCount] = [...answers].sort((a, b) => b[1] - a[1])[0] ?? ["", 0];
  const success = done.length ? done.filter((p) => isSuccess(p.reward, top)).length / done.length : 0;
  const perRole: NonNullable<EvalEvent["perRole"]> = {};
  for (const p of done) {
    for (const r of p.roles) {
      const t = (perRole[r.role] ??= { agents: 0, success: 0 });
      t.agents += 1;
      t.success += isSuccess(r.reward, top) ? 1 : 0;
    }
  }
  for (const t of Object.values(perRole)) t.success = t.agents ? t.success / t.agents : 0;
  const decisions = sumInfo(done, "decisions");
  const topAnswerShare = done.length ? topCount / done.length : 0;
  return {
    type: "eval",
    time: new Date().toISOString(),
    step: o.step,
    env: env.name,
    split,
    episodes: done.length,
    meanReward: done.length ? done.reduce((a, p) => a + p.reward, 0) / done.length : 0,
    success,
    mode,
    temperature,
    stage: o.stage,
    failed: played.length - done.length,
    topAnswer: topAnswer.slice(0, 40),
    topAnswerShare,
    collapsed: done.length >= 8 && topAnswerShare >= COLLAPSE_SHARE && success < 0.5,
    ...(Object.keys(perRole).length > 1 || entry.roles["*"] !== undefined ? { perRole } : {}),
    ...(decisions > 0 ? { decisions: { total: decisions, invalid: sumInfo(done, "invalid"), fallbacks: sumInfo(done, "fallbacks"), ...decisionsByRole(done) } } : {}),
  };
}

/** The environment's per-role decision counts (`info.byRole`: decisions, invalid, fallbacks), summed over episodes. */
function decisionsByRole(done: readonly Played[]): { byRole?: NonNullable<NonNullable<EvalEvent["decisions"]>["byRole"]> } {
  const byRole: NonNullable<NonNullable<EvalEvent["decisions"]>["byRole"]> = {};
  for (const p of done) {
    const roles = p.info["byRole"];
    if (!roles || typeof roles !== "object") continue;
    for (const [role, c] of Object.entries(roles as Record<string, Record<string, unknown>>)) {
      const t = (byRole[role] ??= { total: 0, invalid: 0, fallbacks: 0 });
      const n = (k: string): number => (typeof c[k] === "number" ? (c[k] as number) : 0);
      t.total += n("decisions");
      t.invalid += n("invalid");
      t.fallbacks += n("fallbacks");
    }
  }
  return Object.keys(byRole).length ? { byRole } : {};
}

function sumInfo(done: readonly Played[], key: string): number {
  return done.reduce((a, p) => a + (typeof p.info[key] === "number" ? (p.info[key] as number) : 0), 0);
}

async function playOne(
  o: SkillEvalOptions,
  env: PreparedEnvironment,
  roles: Readonly<Record<string, string>>,
  maxTurns: number,
  task: Task,
  index: number,
  mode: EvalMode,
  temperature: number,
  known: { policies: readonly string[]; frozen: readonly string[] },
): Promise<Played> {
  const seats = resolveSeats(env.name, seatsOf(task, env.installed.manifest.agents), roles, known);
  const byAgent = new Map(seats.agents.map((a) => [a.agentId, a]));
  const trained = seats.agents.filter((a) => a.target.kind === "policy");
  const last = new Map<string, string>();
  let calls = 0;
  const failed: Played = { reward: 0, answer: "", failed: true, roles: [], info: {} };
  // A frozen opponent's endpoint failing (down, slow, rate-limited) fails this episode only, as in
  // training (an infrastructure failure, never scored), not the whole evaluation.
  const result = await playEpisode({
    runtime: env.runtime,
    task,
    seed: o.config.run.seed * 100_003 + index,
    builtinAgents: seats.builtin,
    maxSteps: maxTurns,
    act: async (agent, _task, history, format) => {
      const seat = byAgent.get(agent);
      const seed = (o.config.run.seed * 1_000_003 + index * 7919 + calls++) >>> 0;
      const text = seat === undefined ? "" : await complete(o, seat.target, history, mode, temperature, seed, format);
      last.set(agent, text);
      return text;
    },
  }).catch((err: unknown) => {
    if (err instanceof FrozenUpstreamError) return null;
    throw err;
  });
  if (result === null) return failed;
  // A game cut off at maxTurns scores the bottom of the reward range for the trained seats, as training's
  // agent loop scores it (it counted as failed, left out of success, which inflated it).
  if (result.kind === "unfinished") {
    const min = env.installed.manifest.reward.min;
    return { reward: min, answer: (last.get(trained[0]?.agentId ?? "") ?? "").trim(), failed: false, roles: trained.map((a) => ({ role: a.role, reward: min })), info: { truncated: true } };
  }
  if (result.kind !== "done") return failed;
  const ids = trained.length ? trained.map((a) => a.agentId) : Object.keys(result.rewards);
  const rewards = ids.map((id) => result.rewards[id] ?? 0);
  const info = result.turns.at(-1)?.info ?? {};
  return {
    reward: rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : 0,
    answer: (last.get(trained[0]?.agentId ?? "") ?? "").trim(),
    failed: false,
    roles: trained.map((a) => ({ role: a.role, reward: result.rewards[a.agentId] ?? 0 })),
    info,
  };
}

async function complete(
  o: SkillEvalOptions,
  target: { kind: "policy" | "frozen"; name: string },
  history: History,
  mode: EvalMode,
  temperature: number,
  seed: number,
  format: ResponseFormat | undefined,
): Promise<string> {
  const maxTokens = o.config.sampling.maxTokens;
  if (target.kind === "frozen") {
    const responseFormat = format ? { response_format: { type: "json_schema", json_schema: { name: format.name, schema: format.schema } } } : {};
    const reply = await o.frozen.get(target.name)!.complete({ messages: history, max_tokens: maxTokens, temperature, ...responseFormat });
    return reply.choices[0]?.message.content ?? "";
  }
  const { engine, tokenizer } = o.policies.get(target.name)!;
  // The observation's schema constrains decoding as the server's response_format does (the embedded engine's mask).
  const mask = format && engine.structuredOutput === "mask" ? createJsonMask(tokenizer, toJsonGrammar(format.schema, "responseFormat")) : undefined;
  const guided = format && engine.structuredOutput === "guided" ? { guided: { kind: "json_schema" as const, schema: format.schema } } : {};
  const rendered = tokenizer.renderChat(history.map((m): ChatTurnMessage => ({ role: m.role, content: m.content })));
  const ids = promptIds(rendered);
  const room = engine.maxContext - ids.length;
  if (room < 1) return "";
  const r = await engine.generate(ids, {
    maxTokens: Math.min(maxTokens, room),
    temperature,
    topP: mode === "greedy" ? 1 : o.config.sampling.topP,
    stopIds: tokenizer.stopIds,
    seed,
    ...(mask ? { mask } : {}),
    ...guided,
  });
  const out = r.outputIds.length && tokenizer.stopIds.includes(r.outputIds.at(-1)!) ? r.outputIds.slice(0, -1) : r.outputIds;
  return tokenizer.decode(out);
}
