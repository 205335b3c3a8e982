import type { SchedulerEvent } from "../scheduler/types.ts";
import type { MergeStats, StepReport } from "../../server/training/index.ts";
import type { EpisodeEndEvent, StepEvent } from "./events.ts";

/** Rewards counted for one environment (per episode) or one `<env>/<role>` (per trained agent). */
interface Tally {
  n: number;
  /** Each reward counted, in arrival order; summed in sorted order so that the mean does not depend on it. */
  rewards: number[];
  successes: number;
}

/** A reward that reaches the environment's top reward (`reward.max`) is a success. */
export function isSuccess(reward: number, top: number): boolean {
  return reward >= top - 1e-9;
}

function add(into: Map<string, Tally>, key: string, reward: number, top: number): void {
  const t = into.get(key) ?? { n: 0, rewards: [], successes: 0 };
  t.n += 1;
  t.rewards.push(reward);
  if (isSuccess(reward, top)) t.successes += 1;
  into.set(key, t);
}

/**
 * Floating-point sums depend on their order and episodes finish in any order: summed sorted, the same
 * rewards give the same mean to the last bit (run.deterministic promises the same step metrics).
 */
function summarise(t: Tally): { meanReward: number; success: number } {
  const sum = [...t.rewards].sort((a, b) => a - b).reduce((a, b) => a + b, 0);
  return { meanReward: sum / t.n, success: t.successes / t.n };
}

/** An episode's reward as the run reports it: the mean over its trained agents (over every agent when none is trained). */
export function episodeReward(e: Extract<SchedulerEvent, { type: "episode-end" }>): number {
  const trained = Object.keys(e.trained);
  return meanOf(trained.length ? trained.map((id) => e.result.rewards[id] ?? 0) : Object.values(e.result.rewards));
}

/** The `episode-end` event of metrics.jsonl for a finished episode; `step`: steps trained so far. */
export function episodeEndEvent(e: Extract<SchedulerEvent, { type: "episode-end" }>, step: number, now = Date.now()): EpisodeEndEvent {
  return {
    type: "episode-end",
    time: new Date(now).toISOString(),
    step,
    env: e.env,
    taskId: e.taskId,
    purpose: e.purpose,
    episodeId: e.result.episodeId,
    clientId: e.result.clientId,
    attempt: e.result.attempt,
    reward: episodeReward(e),
    ...(e.result.code ? { code: e.result.code } : {}),
    ...rewardPartsOf(e),
  };
}

/** The mean of each reward part over the episode's trained agents, when a reward model or judge scored it. */
function rewardPartsOf(e: Extract<SchedulerEvent, { type: "episode-end" }>): { rewardParts?: Record<string, number> } {
  const parts = e.result.info.rewardParts as Record<string, { values?: Record<string, number> }> | undefined;
  if (!parts || typeof parts !== "object") return {};
  const trained = Object.keys(e.trained);
  const agents = (trained.length ? trained : Object.keys(parts)).filter((id) => parts[id]?.values);
  if (agents.length === 0) return {};
  const names = new Set(agents.flatMap((id) => Object.keys(parts[id]!.values!)));
  return { rewardParts: Object.fromEntries([...names].map((n) => [n, meanOf(agents.map((id) => parts[id]!.values![n] ?? 0))])) };
}

/**
 * Tallies what happened between two training steps (episodes per environment, failures by kind) and
 * turns a sync's step reports into the run's `step` event.
 */
export class StepStats {
  readonly #topReward: ReadonlyMap<string, number>;
  #envs = new Map<string, Tally>();
  #roles = new Map<string, Tally>();
  #failures: Record<string, number> = {};
  #failedGroups = { groups: 0, episodes: 0 };
  #since: number;
  #merge: { calls: number; sample: number };

  /** `topReward`: each environment's manifest `reward.max` (an episode that reaches it is a success). */
  constructor(topReward: ReadonlyMap<string, number>, now = Date.now()) {
    this.#topReward = topReward;
    this.#since = now;
    this.#merge = { calls: 0, sample: 0 };
  }

  /** Feeds one scheduler event (training episodes and failures; evaluation is reported apart). */
  observe(e: SchedulerEvent): void {
    if (e.type === "episode-end" && e.purpose === "train") {
      const top = this.#topReward.get(e.env) ?? 1;
      add(this.#envs, e.env, episodeReward(e), top);
      for (const [id, role] of Object.entries(e.trained)) add(this.#roles, `${e.env}/${role}`, e.result.rewards[id] ?? 0, top);
    } else if (e.type === "episode-abort") {
      this.#failures[e.reason.kind] = (this.#failures[e.reason.kind] ?? 0) + 1;
    } else if (e.type === "group-failed") {
      this.#failedGroups.groups += 1;
      this.#failedGroups.episodes += e.episodeIds.length;
    }
  }

  /** What finished since the last step (the live fill): per environment, failures by kind, the rate. */
  finished(now = Date.now()): { perEnv: Record<string, { episodes: number; meanReward: number; success: number }>; failures: Record<string, number>; perS: number } {
    let total = 0;
    for (const t of this.#envs.values()) total += t.n;
    return {
      perEnv: Object.fromEntries([...this.#envs].map(([env, t]) => [env, { episodes: t.n, ...summarise(t) }])),
      failures: { ...this.#failures },
      perS: (total * 1000) / Math.max(1, now - this.#since),
    };
  }

  /** Failures and failed groups since the last step, for the run's `end` event. */
  tail(): { failures: Record<string, number>; failedGroups: { groups: number; episodes: number } } {
    return { failures: { ...this.#failures }, failedGroups: { ...this.#failedGroups } };
  }

  /** The step event for a sync's reports; resets the tallies. `merge`: the coordinator's running totals. */
  take(step: number, version: number, reports: readonly StepReport[], merge: MergeStats, now = Date.now()): StepEvent {
    const durationMs = Math.max(1, now - this.#since);
    const { perEnv, perS } = this.finished(now);
    const perRole: NonNullable<StepEvent["perRole"]> = {};
    for (const [key, t] of this.#roles) perRole[key] = { agents: t.n, ...summarise(t) };
    const perPolicy: StepEvent["perPolicy"] = {};
    for (const r of reports) {
      perPolicy[r.policy] = {
        samples: r.samples,
        meanReward: r.meanReward,
        loss: r.metrics?.loss ?? 0,
        tokens: r.tokens,
        gradNorm: r.metrics?.gradNorm ?? 0,
        trainMs: r.metrics?.durationMs ?? 0,
        ...(r.metrics?.treeTokens !== undefined ? { treeTokens: r.metrics.treeTokens } : {}),
      };
    }
    const event: StepEvent = {
      type: "step",
      time: new Date(now).toISOString(),
      step,
      version,
      durationMs,
      episodesPerS: perS,
      perEnv,
      perRole,
      perPolicy,
      filteredGroups: reports.reduce((a, r) => a + r.droppedGroups.length, 0),
      trainedGroups: reports.reduce((a, r) => a + (r.outcome === "trained" ? r.groups : 0), 0),
      trainedGroupsPerEnv: trainedPerEnv(reports),
      failures: this.#failures,
      failedGroups: this.#failedGroups,
      merging: { callTokens: merge.unmergedTokens - this.#merge.calls, sampleTokens: merge.mergedTokens - this.#merge.sample },
    };
    this.#envs = new Map();
    this.#roles = new Map();
    this.#failures = {};
    this.#failedGroups = { groups: 0, episodes: 0 };
    this.#since = now;
    this.#merge = { calls: merge.unmergedTokens, sample: merge.mergedTokens };
    return event;
  }
}

function meanOf(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}

/** Groups each environment contributed to the steps that trained. */
function trainedPerEnv(reports: readonly StepReport[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of reports) {
    if (r.outcome !== "trained") continue;
    for (const [env, n] of Object.entries(r.groupsPerEnv)) out[env] = (out[env] ?? 0) + n;
  }
  return out;
}
