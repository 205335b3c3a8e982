import type { TrainerErrorCode } from "./protocol.ts";

/** The trainer answered with a protocol error (its `code` says which). */
export class TrainerRequestError extends Error {
  readonly code = "AJ_ERR_TRAINER_REQUEST";
  constructor(
    readonly status: number,
    readonly trainerCode: TrainerErrorCode | "unknown",
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`trainer ${status} ${trainerCode}: ${message}`, options);
    this.name = "TrainerRequestError";
  }
}

/** The trainer could not be reached, timed out, or answered with something that is not the protocol. */
export class TrainerUnavailableError extends Error {
  readonly code = "AJ_ERR_TRAINER_UNAVAILABLE";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TrainerUnavailableError";
  }
}

/** The trainer speaks another protocol version than this client. */
export class TrainerProtocolError extends Error {
  readonly code = "AJ_ERR_TRAINER_PROTOCOL";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TrainerProtocolError";
  }
}
