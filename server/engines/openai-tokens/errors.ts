/** A replica refused the request (4xx): retrying elsewhere would not help. */
export class ReplicaRequestError extends Error {
  readonly code = "AJ_ERR_REPLICA_REQUEST";
  constructor(
    readonly url: string,
    readonly status: number,
    message: string,
  ) {
    super(`${url}: ${status} ${message}`);
    this.name = "ReplicaRequestError";
  }
}

/** A replica could not serve (network error, timeout, 5xx, 429): the call is retried on another. */
export class ReplicaUnavailableError extends Error {
  readonly code = "AJ_ERR_REPLICA_UNAVAILABLE";
  constructor(
    readonly url: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${url}: ${message}`, options);
    this.name = "ReplicaUnavailableError";
  }
}

/** A replica answered outside the token-in/token-out contract (e.g. tokens not as "token_id:N"). */
export class ReplicaProtocolError extends Error {
  readonly code = "AJ_ERR_REPLICA_PROTOCOL";
  constructor(
    readonly url: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${url}: ${message}`, options);
    this.name = "ReplicaProtocolError";
  }
}

/** Every attempt failed or no replica serves the current version; `cause` is the last failure. */
export class NoReplicaError extends Error {
  readonly code = "AJ_ERR_NO_REPLICA";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "NoReplicaError";
  }
}

/** The trainer moved on but no replica could load the new weights; the old version keeps serving. */
export class PublishFailedError extends Error {
  readonly code = "AJ_ERR_PUBLISH_FAILED";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PublishFailedError";
  }
}

/** A sample to train holds a generated span that this engine never served: ids were changed on the way. */
export class UnservedTokensError extends Error {
  readonly code = "AJ_ERR_UNSERVED_TOKENS";
  constructor(
    readonly sampleIndex: number,
    readonly position: number,
  ) {
    super(`sample ${sampleIndex}: the trained span at token ${position} is not an output this engine served`);
    this.name = "UnservedTokensError";
  }
}

/** The prompt leaves no room for a single output token. */
export class ContextOverflowError extends Error {
  readonly code = "AJ_ERR_CONTEXT_OVERFLOW";
  constructor(
    readonly promptTokens: number,
    readonly maxContext: number,
  ) {
    super(`prompt of ${promptTokens} tokens leaves no room in a context of ${maxContext}`);
    this.name = "ContextOverflowError";
  }
}

/** The engine config is inconsistent in a way its schema cannot say (e.g. replicaWeights vs baseUrls). */
export class EngineConfigError extends Error {
  readonly code = "AJ_ERR_ENGINE_CONFIG";
  constructor(message: string) {
    super(message);
    this.name = "EngineConfigError";
  }
}
