import type { AgentBinding, Episode, EpisodeState } from "./episode.ts";

/**
 * Expected outcomes of the store's operations, as values: callers answer them (an HTTP status, a
 * protocol reply) and throw only for failures nobody expects (storage, bugs).
 */

/** What the caller asked to do to an episode, for `wrong-state`. */
export type EpisodeAction = "claim" | "heartbeat" | "end" | "abort";

/** No live episode with this id: never registered, or already ended or aborted. */
export interface NotFound {
  kind: "not-found";
  episodeId: string;
}

/** A transition the state machine does not have (e.g. ending an episode that was never claimed). */
export interface WrongState {
  kind: "wrong-state";
  episodeId: string;
  state: EpisodeState;
  action: EpisodeAction;
}

export interface AlreadyRegistered {
  kind: "exists";
  episodeId: string;
}

/** An agent bound to a policy or frozen model the server does not know. */
export interface UnknownBinding {
  kind: "unknown-binding";
  agentId: string;
  target: string;
  /** The kind the agent was bound as, and whether `target` names a model of the other kind. */
  as?: "policy" | "frozen";
  otherKind?: boolean;
}

/**
 * Rewards the server refuses (missing for a trained agent, not finite, outside the environment's range).
 * The episode is already aborted as a `protocol` failure: it is retried, never trained.
 */
export interface RewardsRefused {
  kind: "rewards-refused";
  episodeId: string;
  reason: string;
  /** The episode as aborted. */
  episode: Episode;
}

export type EpisodeRefusal = NotFound | WrongState | AlreadyRegistered | UnknownBinding | RewardsRefused;

export type Done = { kind: "ok"; episode: Episode };

export type RegisterResult = Done | AlreadyRegistered | UnknownBinding;
/** `heartbeat` and `abort`. */
export type ChangeResult = Done | NotFound | WrongState;
export type EndResult = ChangeResult | RewardsRefused;

export type ClaimResult =
  | { kind: "claimed"; episode: Episode; keys: Record<string, string> }
  /** Claims are paused (a weight sync). */
  | { kind: "paused" }
  /** No registered episode to claim. */
  | { kind: "empty" }
  | NotFound
  | WrongState;

/** A chat call's key, resolved: `unauthorized` answers 401, `conflict` 409. */
export type Authorization =
  | { kind: "ok"; episode: Readonly<Episode>; agentId: string; binding: AgentBinding }
  | { kind: "unauthorized"; message: string }
  | { kind: "conflict"; message: string };
