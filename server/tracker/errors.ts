import { AgentJetServerError } from "../errors.ts";

/** Calls could not be written to run.db (the writer thread failed), or the writer thread stopped answering. */
export class RecordingFailedError extends AgentJetServerError {
  constructor(message: string) {
    super("AJ_ERR_RECORDING_FAILED", message);
  }
}
