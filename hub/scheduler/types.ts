import type { Task } from "../../sdk/env/index.ts";
import type { CodeVersion } from "../../sdk/swarm/protocol.ts";
import type { Weight } from "./mixing.ts";
import type { AbortReason } from "./port.ts";

/** One environment the scheduler mixes in, resolved to an exact version. */
export interface SchedulerEnvironment {
  name: string;
  version: string;
  /** When set, only clients announcing exactly this content hash get its episodes (see `acceptDev`). */
  hash?: string;
  /** Clients announcing a development version (a local plugin being edited) get its episodes whatever their hash (default false). */
  acceptDev?: boolean;
  weight: Weight;
  split: string;
  /** The manifest's seats. */
  agents: ReadonlyArray<{ id: string; role: string }>;
  /** Role -> policy name, frozen model name, or "@builtin". */
  roles: Readonly<Record<string, string>>;
  maxTurns: number;
}

export interface EpisodeResult {
  episodeId: string;
  /** Tries this episode took (0 = first try). */
  attempt: number;
  clientId: string;
  rewards: Record<string, number>;
  info: Record<string, unknown>;
  /** The environment code it ran with, as the client reported it. */
  code?: CodeVersion;
}

export interface GroupReport {
  groupId: string;
  env: string;
  taskId: string;
  status: "complete" | "failed";
  /** Complete groups: exactly `groupSize` results, one per member. */
  episodes: EpisodeResult[];
  failures: AbortReason[];
}

export interface BatchReport {
  /** Batch index = the optimizer step whose weights it was mixed for. */
  step: number;
  /** Planned groups per environment (the quotas). */
  quotas: Record<string, number>;
  /** Complete groups per environment (equals the quotas unless groups failed and could not be replaced). */
  filled: Record<string, number>;
  groups: GroupReport[];
  failedGroups: number;
}

export interface EvalEnvReport {
  episodes: number;
  failed: number;
  /** Mean over episodes of the mean reward of the agents bound to policies. */
  meanReward: number;
  rewards: Array<{ taskId: string; rewards: Record<string, number> }>;
  /** Per finished episode, the mean reward of its policy agents (what `meanReward` averages). */
  scores: number[];
}

export interface EvalReport {
  id: number;
  /** The number of batches completed when it was started. */
  step: number;
  split: string;
  perEnv: Record<string, EvalEnvReport>;
}

export interface EvalRequest {
  split?: string;
  /** Tasks per environment (the first N of the split, so runs compare). */
  tasks?: number;
  /** Environment names; all when absent. */
  envs?: readonly string[];
}

export type SchedulerEvent =
  | { type: "batch"; batch: BatchReport }
  /**
   * A group failed for good (a member ran out of retries). `episodeIds`: its members that had ended; the
   * training side drops them (a group trains whole or not at all).
   */
  | { type: "group-failed"; env: string; groupId: string; taskId: string; episodeIds: string[]; failures: AbortReason[] }
  | { type: "eval"; report: EvalReport }
  /** `trained`: agent id -> role of the episode's agents bound to policies (the ones whose reward is trained on). */
  | { type: "episode-end"; env: string; taskId: string; purpose: "train" | "eval"; trained: Record<string, string>; result: EpisodeResult }
  | { type: "episode-abort"; episodeId: string; clientId: string | null; reason: AbortReason; willRetry: boolean }
  | { type: "agree-sync"; clientId: string }
  /** A client's environments do not all fit the run (`describeMismatch`): it was told the same over /swarm. */
  | { type: "env-mismatch"; clientId: string; message: string }
  | { type: "client"; clientId: string; status: "connected" | "reconnected" | "disconnected" | "lost" }
  /**
   * An environment's episodes have waited `SchedulerOptions.waitingReportMs` with no connected client able to
   * run them (its batches cannot finish, so training waits): `message` says what it waits for and the fix.
   */
  | { type: "env-waiting"; env: string; queued: number; message: string }
  /** A client that runs a reported environment connected: its episodes go on. */
  | { type: "env-served"; env: string; clients: string[]; message: string };

/** An environment reported as waiting for a client (`Scheduler.waiting()`, the engine status). */
export interface WaitingEnvironment {
  env: string;
  /** Its episodes queued for a client. */
  queued: number;
  /** How long no connected client could run it. */
  waitingMs: number;
  message: string;
}

/** The scheduler's running counters. */
export interface Counters {
  assigned: number;
  ended: number;
  aborted: number;
  lost: number;
  retried: number;
  failedGroups: number;
  staleResults: number;
  batchesCompleted: number;
}

export interface SchedulerStats extends Counters {
  clients: number;
  connected: number;
  queued: number;
  inFlight: number;
}

export type { Task };

/**
 * Group-relative rewards (a manifest judge with `scope: group`): once every episode of a training group
 * has ended on its client, the group is scored at once. `score` gets each episode's id and client
 * rewards, in slot order, and returns each one's rewards and info to record; it throws when it cannot
 * score (the group's held episodes are then retried as `reward-model`). `signal` aborts once the
 * scheduler closes: a judge waiting to retry stops waiting.
 */
export interface GroupScorer {
  score(input: {
    env: string;
    task: import("../../sdk/env/index.ts").Task;
    episodes: ReadonlyArray<{ episodeId: string; rewards: Readonly<Record<string, number>> }>;
    signal: AbortSignal;
  }): Promise<Array<{ rewards: Record<string, number>; info: Record<string, unknown> }>>;
}

