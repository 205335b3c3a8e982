/** Errors of the swarm client. Expected outcomes (a lost connection, a failed episode) are values or events. */
export class SwarmClientError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SwarmClientError";
    this.code = code;
  }
}

export class ChatCompletionError extends SwarmClientError {
  readonly status: number;
  constructor(status: number, body: string) {
    super("AJ_ERR_CLIENT_CHAT", `chat completion failed with HTTP ${status}: ${body.slice(0, 300)}`);
    this.status = status;
  }
}
