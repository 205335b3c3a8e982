import { withCode } from "../../../errors/index.ts";
import { AgentJetServerError } from "../../errors.ts";

/** A replica refused the request (4xx): retrying elsewhere would not help. */
export class ReplicaRequestError extends AgentJetServerError {
  constructor(
    readonly url: string,
    readonly status: number,
    message: string,
  ) {
    super("AJ_ERR_REPLICA_REQUEST", `${url}: ${status} ${message}`);
  }
}

/** The base of a replica's error with one code: `url` names the replica and starts the message. */
function withReplicaCode(code: string) {
  return class extends AgentJetServerError {
    constructor(
      readonly url: string,
      message: string,
      options?: { cause?: unknown },
    ) {
      super(code, `${url}: ${message}`, options);
    }
  };
}

/** A replica could not serve (network error, timeout, 5xx, 429): the call is retried on another. */
export class ReplicaUnavailableError extends withReplicaCode("AJ_ERR_REPLICA_UNAVAILABLE") {}

/** A replica answered outside the token-in/token-out contract (e.g. tokens not as "token_id:N"). */
export class ReplicaProtocolError extends withReplicaCode("AJ_ERR_REPLICA_PROTOCOL") {}

/** Every attempt failed or no replica serves the current version; `cause` is the last failure. */
export class NoReplicaError extends withCode(AgentJetServerError, "AJ_ERR_NO_REPLICA") {}

/** The trainer moved on but no replica could load the new weights; the old version keeps serving. */
export class PublishFailedError extends withCode(AgentJetServerError, "AJ_ERR_PUBLISH_FAILED") {}

/** A sample to train holds a generated span that this engine never served: ids were changed on the way. */
export class UnservedTokensError extends AgentJetServerError {
  constructor(
    readonly sampleIndex: number,
    readonly position: number,
  ) {
    super("AJ_ERR_UNSERVED_TOKENS", `sample ${sampleIndex}: the trained span at token ${position} is not an output this engine served`);
  }
}

/** The prompt leaves no room for a single output token. */
export class ContextOverflowError extends AgentJetServerError {
  constructor(
    readonly promptTokens: number,
    readonly maxContext: number,
  ) {
    super("AJ_ERR_CONTEXT_OVERFLOW", `prompt of ${promptTokens} tokens leaves no room in a context of ${maxContext}`);
  }
}

/** The engine config is inconsistent in a way its schema cannot say (e.g. replicaWeights vs baseUrls). */
export class EngineConfigError extends withCode(AgentJetServerError, "AJ_ERR_ENGINE_CONFIG") {}
