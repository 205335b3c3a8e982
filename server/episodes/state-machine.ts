import type { AbortReason, EndEpisodeInput, Episode, RegisterEpisodeInput } from "./episode.ts";
import type { EpisodeAction, WrongState } from "./outcomes.ts";

/**
 * The episode state machine, pure: registered -> claimed -> ended | aborted; claimed -> registered on
 * idle reclaim (the next claim is a new attempt); registered -> aborted. Every transition returns a new
 * record and never changes the one it is given, so a record's state never changes once it is handed out.
 */

export type Transition = { kind: "ok"; episode: Episode } | WrongState;

const refuse = (e: Episode, action: EpisodeAction): WrongState => ({ kind: "wrong-state", episodeId: e.episodeId, state: e.state, action });

/** A new registered episode. */
export function registeredEpisode(input: RegisterEpisodeInput, episodeId: string, at: number, samplingSeed: number | null): Episode {
  return {
    episodeId,
    taskId: input.taskId,
    env: input.env,
    eval: input.eval ?? false,
    state: "registered",
    agents: structuredClone(input.agents),
    attempt: 0,
    clientId: null,
    createdAt: at,
    claimedAt: null,
    lastActivityAt: null,
    endedAt: null,
    rewards: null,
    metadata: structuredClone(input.metadata ?? {}),
    abortReason: null,
    samplingSeed,
  };
}

/** registered -> claimed: the next attempt, active from `at`. */
export function claimEpisode(e: Episode, clientId: string | null, at: number): Transition {
  if (e.state !== "registered") return refuse(e, "claim");
  return { kind: "ok", episode: { ...e, state: "claimed", attempt: e.attempt + 1, clientId, claimedAt: at, lastActivityAt: at } };
}

/**
 * Null when the episode may report activity (a heartbeat, a chat call): only a claimed one may. Activity
 * is no transition: the store stamps `lastActivityAt` on the live record, which a chat call must not copy.
 */
export function refuseActivity(e: Episode): WrongState | null {
  return e.state === "claimed" ? null : refuse(e, "heartbeat");
}

/** claimed -> ended with its rewards; `input.metadata` is merged over the registered metadata. */
export function endEpisode(e: Episode, input: EndEpisodeInput, at: number): Transition {
  if (e.state !== "claimed") return refuse(e, "end");
  const metadata = { ...e.metadata, ...structuredClone(input.metadata ?? {}) };
  return { kind: "ok", episode: { ...e, state: "ended", endedAt: at, rewards: { ...input.rewards }, metadata } };
}

/** registered or claimed -> aborted. */
export function abortEpisode(e: Episode, reason: AbortReason, at: number): Transition {
  if (e.state !== "claimed" && e.state !== "registered") return refuse(e, "abort");
  return { kind: "ok", episode: { ...e, state: "aborted", endedAt: at, abortReason: { kind: reason.kind, message: reason.message } } };
}

/** True when a claim has been idle for `idleMs` or longer at `at`. */
export function isIdle(e: Episode, at: number, idleMs: number): boolean {
  return e.state === "claimed" && e.lastActivityAt !== null && at - e.lastActivityAt >= idleMs;
}

/** claimed -> registered (an idle claim given back): its attempt stays, so the old keys stop working. */
export function reclaimEpisode(e: Episode): Transition {
  if (e.state !== "claimed") return refuse(e, "claim");
  return { kind: "ok", episode: { ...e, state: "registered", clientId: null, claimedAt: null, lastActivityAt: null } };
}
