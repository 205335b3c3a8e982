/** The base of every coded server error. `code` is stable (`AJ_ERR_...`); tests assert on it. */
export class AgentJetServerError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}
