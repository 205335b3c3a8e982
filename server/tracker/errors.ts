import { withCode } from "../../errors/index.ts";
import { AgentJetServerError } from "../errors.ts";

/** Calls could not be written to run.db (the writer thread failed), or the writer thread stopped answering. */
export class RecordingFailedError extends withCode(AgentJetServerError, "AJ_ERR_RECORDING_FAILED") {}

/** A call row read from run.db leaves out what repeats its agent's previous call, and that call was not read before it. */
export class CallRowsIncompleteError extends withCode(AgentJetServerError, "AJ_ERR_CALL_ROWS_INCOMPLETE") {}
