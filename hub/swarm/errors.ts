import { AgentJetError } from "../../errors/index.ts";
import { SWARM_FATAL_ERRORS } from "../../sdk/swarm/protocol.ts";

/** Stable codes the swarm plugin sends in `error` frames before it closes a socket. */
export const SWARM_ERRORS = {
  badFrame: "AJ_ERR_SWARM_BAD_FRAME",
  helloFirst: "AJ_ERR_SWARM_HELLO_FIRST",
  closing: "AJ_ERR_SWARM_CLOSING",
  ...SWARM_FATAL_ERRORS,
} as const;

/** A `--workflow` file whose module exports no workflow function. */
export class WorkflowExportError extends AgentJetError {
  constructor(file: string) {
    super("AJ_ERR_CLIENT_WORKFLOW", `${file} exports no workflow function (export const workflow = ...)`);
  }
}
