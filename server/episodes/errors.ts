import { AgentJetServerError } from "../errors.ts";
import type { EpisodeRefusal } from "./outcomes.ts";

export class EpisodeNotFoundError extends AgentJetServerError {
  constructor(episodeId: string) {
    super("AJ_ERR_EPISODE_NOT_FOUND", `no episode '${episodeId}'`);
  }
}

/** A transition the state machine does not allow (e.g. ending an episode that was never claimed). */
export class EpisodeStateError extends AgentJetServerError {
  constructor(episodeId: string, state: string, action: string) {
    super("AJ_ERR_EPISODE_STATE", `episode '${episodeId}' is ${state}; cannot ${action}`);
  }
}

export class EpisodeExistsError extends AgentJetServerError {
  constructor(episodeId: string) {
    super("AJ_ERR_EPISODE_EXISTS", `episode '${episodeId}' is already registered`);
  }
}

/** An agent bound to a policy or frozen model the server does not know. */
export class UnknownBindingError extends AgentJetServerError {
  /** `as`: the kind the agent was bound as; `otherKind`: `target` names a model of the other kind. */
  constructor(agentId: string, target: string, as?: "policy" | "frozen", otherKind = false) {
    super("AJ_ERR_EPISODE_BINDING", bindingMessage(agentId, target, as, otherKind));
  }
}

function bindingMessage(agentId: string, target: string, as: "policy" | "frozen" | undefined, otherKind: boolean): string {
  if (as === undefined) return `agent '${agentId}' is bound to '${target}', which is neither a policy nor a frozen model`;
  const other = as === "policy" ? "frozen" : "policy";
  const name = (kind: "policy" | "frozen") => (kind === "policy" ? "a policy" : "a frozen model");
  if (otherKind) return `agent '${agentId}' is bound as ${name(as)} (kind "${as}") to '${target}', which is ${name(other)}: bind it with kind "${other}"`;
  return `agent '${agentId}' is bound as ${name(as)} (kind "${as}") to '${target}', which is no ${as === "policy" ? "policy" : "frozen model"} of this server`;
}

/**
 * Rewards the server refuses (missing for a trained agent, not finite, outside the environment's
 * range). The episode is already aborted as a `protocol` failure: it is retried, never trained.
 */
export class InvalidRewardsError extends AgentJetServerError {
  constructor(episodeId: string, reason: string) {
    super("AJ_ERR_EPISODE_REWARDS", `episode '${episodeId}' was aborted: ${reason}`);
  }
}

/** `run.db` refused a write or a read of the episodes table (disk full, a closed or corrupt database). */
export class EpisodeStorageError extends AgentJetServerError {
  constructor(action: string, cause: unknown) {
    super("AJ_ERR_EPISODE_STORAGE", `could not ${action} in run.db: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** A refusal as its coded error, for callers to whom it is a failure (an HTTP answer, the scheduler's retry). */
export function refusalError(r: EpisodeRefusal): AgentJetServerError {
  switch (r.kind) {
    case "not-found":
      return new EpisodeNotFoundError(r.episodeId);
    case "wrong-state":
      return new EpisodeStateError(r.episodeId, r.state, r.action);
    case "exists":
      return new EpisodeExistsError(r.episodeId);
    case "unknown-binding":
      return new UnknownBindingError(r.agentId, r.target, r.as, r.otherKind);
    case "rewards-refused":
      return new InvalidRewardsError(r.episodeId, r.reason);
  }
}
