import type { SchedulerEvent } from "../scheduler/types.ts";
import type { StepReport } from "../../server/training/coordinator.ts";
import type { MergeStats } from "../../server/training/merge-timelines.ts";
import type { StepEvent } from "./events.ts";

interface EnvTally {
  episodes: number;
  reward: number;
  successes: number;
}

/**
 * Tallies what happened between two training steps (episodes per environment, failures by kind) and
 * turns a sync's step reports into the run's `step` event.
 */
export class StepStats {
  readonly #topReward: ReadonlyMap<string, number>;
  #envs = new Map<string, EnvTally>();
  /** `<env>/<role>` of trained agents: agents counted, reward summed, successes. */
  #roles = new Map<string, EnvTally>();
  #failures: Record<string, number> = {};
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
      const score = meanOf(e.trained.length ? e.trained.map((id) => e.result.rewards[id] ?? 0) : Object.values(e.result.rewards));
      const t = this.#envs.get(e.env) ?? { episodes: 0, reward: 0, successes: 0 };
      t.episodes += 1;
      t.reward += score;
      if (score >= (this.#topReward.get(e.env) ?? 1) - 1e-9) t.successes += 1;
      this.#envs.set(e.env, t);
      for (const id of e.trained) {
        const key = `${e.env}/${e.roles[id] ?? id}`;
        const r = this.#roles.get(key) ?? { episodes: 0, reward: 0, successes: 0 };
        const reward = e.result.rewards[id] ?? 0;
        r.episodes += 1;
        r.reward += reward;
        if (reward >= (this.#topReward.get(e.env) ?? 1) - 1e-9) r.successes += 1;
        this.#roles.set(key, r);
      }
    } else if (e.type === "episode-abort") {
      this.#failures[e.reason.kind] = (this.#failures[e.reason.kind] ?? 0) + 1;
    }
  }

  /** What finished since the last step (the live fill): per environment, failures by kind, the rate. */
  finished(now = Date.now()): { perEnv: Record<string, { episodes: number; meanReward: number; success: number }>; failures: Record<string, number>; perS: number } {
    let total = 0;
    for (const t of this.#envs.values()) total += t.episodes;
    return {
      perEnv: Object.fromEntries([...this.#envs].map(([env, t]) => [env, { episodes: t.episodes, meanReward: t.reward / t.episodes, success: t.successes / t.episodes }])),
      failures: { ...this.#failures },
      perS: (total * 1000) / Math.max(1, now - this.#since),
    };
  }

  /** The step event for a sync's reports; resets the tallies. `merge`: the coordinator's running totals. */
  take(step: number, version: number, reports: readonly StepReport[], merge: MergeStats, now = Date.now()): StepEvent {
    const durationMs = Math.max(1, now - this.#since);
    const perEnv: StepEvent["perEnv"] = {};
    let episodes = 0;
    for (const [env, t] of this.#envs) {
      episodes += t.episodes;
      perEnv[env] = { episodes: t.episodes, meanReward: t.episodes ? t.reward / t.episodes : 0, success: t.episodes ? t.successes / t.episodes : 0 };
    }
    const perRole: NonNullable<StepEvent["perRole"]> = {};
    for (const [key, t] of this.#roles) perRole[key] = { agents: t.episodes, meanReward: t.reward / t.episodes, success: t.successes / t.episodes };
    const perPolicy: StepEvent["perPolicy"] = {};
    for (const r of reports) {
      perPolicy[r.policy] = {
        samples: r.samples,
        meanReward: r.meanReward,
        loss: r.metrics?.loss ?? 0,
        tokens: r.tokens,
        gradNorm: r.metrics?.gradNorm ?? 0,
        trainMs: r.metrics?.durationMs ?? 0,
      };
    }
    const event: StepEvent = {
      type: "step",
      time: new Date(now).toISOString(),
      step,
      version,
      durationMs,
      episodesPerS: (episodes * 1000) / durationMs,
      perEnv,
      perRole,
      perPolicy,
      filteredGroups: reports.reduce((a, r) => a + r.droppedGroups.length, 0),
      failures: this.#failures,
      merging: { callTokens: merge.unmergedTokens - this.#merge.calls, sampleTokens: merge.mergedTokens - this.#merge.sample },
    };
    this.#envs = new Map();
    this.#roles = new Map();
    this.#failures = {};
    this.#since = now;
    this.#merge = { calls: merge.unmergedTokens, sample: merge.mergedTokens };
    return event;
  }
}

function meanOf(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}
