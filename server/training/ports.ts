import type { CallRecord } from "../tracker/call-record.ts";
import type { TrainBatch, TrainMetrics } from "./sample.ts";

/** How an episode ended, as the episode store reports it. */
export type EpisodeOutcome =
  /** Rewards per agent id. Agents without one are left out of training (counted), never scored 0. */
  | { kind: "rewarded"; rewards: Readonly<Record<string, number>> }
  /** Sandbox crash, timeout, client lost: masked out, never scored. */
  | { kind: "infra-failed"; reason: string }
  /** Given up by the server (e.g. a weight sync's drain timeout). */
  | { kind: "abandoned" };

export interface EndedEpisode {
  episodeId: string;
  taskId: string;
  env: string;
  /**
   * The GRPO group the episode was formed in (the scheduler's group, or the client-driven caller's), from
   * the episode's `metadata.groupId`; null when none was given (the group is then its task, still scoped
   * by environment).
   */
  groupId: string | null;
  /** The client that ran it; `any-client`/`all-clients` count activity by it. */
  clientId: string | null;
  /** Evaluation episodes never enter training. */
  evaluation: boolean;
  outcome: EpisodeOutcome;
  /** Every recorded call of every agent of the episode. */
  calls: readonly CallRecord[];
  /**
   * Which model played each agent (`{ kind: "policy" | "frozen", target }`): a policy's agent that made no
   * trainable call still counts in its group. Absent: the agents that made calls.
   */
  agents?: Readonly<Record<string, { kind: string; target: string }>>;
}

/** What the coordinator needs from the episode store. */
export interface EpisodeStorePort {
  /** Stop handing out new episodes (claims); in-flight ones continue. */
  pauseClaims(): void;
  resumeClaims(): void;
  /** Ids of claimed episodes that have not ended yet. */
  inFlight(): readonly string[];
  /** Gives up in-flight episodes after the drain timeout (they end as `abandoned`, or are re-queued). */
  abandon(episodeIds: readonly string[]): void | Promise<void>;
  /** Subscribes to episode ends; returns the unsubscribe function. */
  onEnded(listener: (episode: EndedEpisode) => void): () => void;
}

/** What the coordinator needs from a policy's engine (an `Engine` satisfies it). */
export interface TrainerPort {
  version(): number;
  /** One optimizer step; moves the version on by one. */
  train(batch: TrainBatch): Promise<TrainMetrics>;
}
