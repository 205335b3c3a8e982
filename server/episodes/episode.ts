/** Episode domain types (the HTTP schemas in `schemas.ts` convert to these). */

/**
 * registered -> claimed -> ended | aborted; claimed -> registered on idle reclaim (a new attempt);
 * registered -> aborted.
 */
export type EpisodeState = "registered" | "claimed" | "ended" | "aborted";

/** Which model plays an agent: a trainable policy on this server or a frozen OpenAI-compatible model. */
export type AgentBinding = { kind: "policy"; target: string } | { kind: "frozen"; target: string };

export interface AbortReason {
  /**
   * A kind of `sdk/failure-kinds.ts` (what the server and the scheduler report); clients may send their
   * own words, kept as sent. Infrastructure, never a score.
   */
  kind: string;
  message: string;
}

export interface Episode {
  episodeId: string;
  taskId: string;
  env: string;
  /** Evaluation episodes never enter training. */
  eval: boolean;
  state: EpisodeState;
  agents: Record<string, AgentBinding>;
  /** Claim count; a key works only for the attempt it was issued for. */
  attempt: number;
  clientId: string | null;
  createdAt: number;
  claimedAt: number | null;
  /** Last chat call or heartbeat of the current claim. */
  lastActivityAt: number | null;
  endedAt: number | null;
  rewards: Record<string, number> | null;
  metadata: Record<string, unknown>;
  abortReason: AbortReason | null;
  /**
   * Deterministic mode (the store's `samplingSeed`): the seed its policy calls derive theirs from
   * (`sampling-seed.ts`); null otherwise. Not persisted: an episode does not outlive its process.
   */
  samplingSeed: number | null;
}

export interface RegisterEpisodeInput {
  /** Defaults to a random UUID. */
  episodeId?: string;
  taskId: string;
  env: string;
  /** agent id -> binding. */
  agents: Record<string, AgentBinding>;
  eval?: boolean;
  metadata?: Record<string, unknown>;
  /**
   * What the episode plays, for its sampling seed in deterministic mode: the same key gives the same
   * samples (the scheduler passes its slot and attempt, which a resumed run plays again). Default: the episode id.
   */
  samplingKey?: string;
  /**
   * What an idle claim becomes (`reclaimIdle`): `requeue` (default) registers it again for another
   * client, as the scheduler's episodes are; `abort` aborts it as `reclaimed`, for a client-driven
   * episode, whose task only its caller holds (re-registered, it waited forever for a claim nobody could serve).
   */
  whenIdle?: "requeue" | "abort";
}

export interface EndEpisodeInput {
  /** agent id -> reward. Agents left out get no reward (frozen agents usually). */
  rewards: Record<string, number>;
  metadata?: Record<string, unknown>;
}
