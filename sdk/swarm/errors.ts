import { AgentJetError } from "../../errors/index.ts";

/** Errors of the swarm client. Expected outcomes (a lost connection, a failed episode) are values or events. */
export class SwarmClientError extends AgentJetError {}

/** Codes of the refusals `SwarmClient.start()` rejects with (besides `SWARM_FATAL_ERRORS` from the server). */
export const SWARM_CLIENT_ERRORS = {
  /** The URL answers, but has no /swarm route (404): not an agentjet server, or the wrong port. */
  noSwarm: "AJ_ERR_CLIENT_NO_SWARM",
  /** 401: no token, or one the server does not know. */
  unauthorized: "AJ_ERR_CLIENT_UNAUTHORIZED",
  /** Another 4xx (a client token refused by Host/Origin checks, ...). */
  refused: "AJ_ERR_CLIENT_REFUSED",
} as const;

export class ChatCompletionError extends SwarmClientError {
  readonly status: number;
  constructor(status: number, body: string) {
    super("AJ_ERR_CLIENT_CHAT", `chat completion failed with HTTP ${status}: ${body.slice(0, 300)}`);
    this.status = status;
  }
}
