import { withCode } from "../../errors/index.ts";
import { AgentJetServerError } from "../errors.ts";

/** Calls could not be written to run.db (the writer thread failed), or the writer thread stopped answering. */
export class RecordingFailedError extends withCode(AgentJetServerError, "AJ_ERR_RECORDING_FAILED") {}
