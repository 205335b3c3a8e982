import { AgentJetServerError } from "../errors.ts";

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
  constructor(agentId: string, target: string) {
    super("AJ_ERR_EPISODE_BINDING", `agent '${agentId}' is bound to '${target}', which is neither a policy nor a frozen model`);
  }
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
