import { withCode } from "../../../errors/index.ts";
import { AgentJetServerError } from "../../errors.ts";
import type { TrainerErrorCode } from "./protocol.ts";

/** The trainer answered with a protocol error (its `code` says which). */
export class TrainerRequestError extends AgentJetServerError {
  constructor(
    readonly status: number,
    readonly trainerCode: TrainerErrorCode | "unknown",
    message: string,
    options?: { cause?: unknown },
  ) {
    super("AJ_ERR_TRAINER_REQUEST", `trainer ${status} ${trainerCode}: ${message}`, options);
  }
}

/** The trainer could not be reached, timed out, or answered with something that is not the protocol. */
export class TrainerUnavailableError extends withCode(AgentJetServerError, "AJ_ERR_TRAINER_UNAVAILABLE") {}

/** The trainer speaks another protocol version than this client. */
export class TrainerProtocolError extends withCode(AgentJetServerError, "AJ_ERR_TRAINER_PROTOCOL") {}
