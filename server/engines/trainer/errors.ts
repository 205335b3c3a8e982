import { withCode } from "../../../errors/index.ts";
import { AgentJetServerError } from "../../errors.ts";
import type { TrainerErrorCode } from "./protocol.ts";

/** The trainer answered with a protocol error (its `code` says which). */
export class TrainerRequestError extends AgentJetServerError {
  constructor(
    readonly status: number,
    readonly trainerCode: TrainerErrorCode | "unknown",
    /** What the trainer (or the client, adding what to do) said, without the status and code. */
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super("AJ_ERR_TRAINER_REQUEST", `trainer ${status} ${trainerCode}: ${detail}`, options);
  }
}

/** The trainer could not be reached, timed out, or answered with something that is not the protocol. */
export class TrainerUnavailableError extends withCode(AgentJetServerError, "AJ_ERR_TRAINER_UNAVAILABLE") {}

/** The trainer speaks another protocol version than this client. */
export class TrainerProtocolError extends withCode(AgentJetServerError, "AJ_ERR_TRAINER_PROTOCOL") {}

/**
 * A run that starts from step 0 found the trainer past version 0: its weights are not the initial ones (it
 * trained for another run, or for a start of this run that wrote no checkpoint).
 */
export class TrainerStateError extends withCode(AgentJetServerError, "AJ_ERR_TRAINER_STATE") {}
