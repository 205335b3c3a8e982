import { AgentJetServerError } from "../errors.ts";
import type { OpenAIErrorBody } from "./schemas.ts";

/** An error that answers with an HTTP status in OpenAI's shape; the `openai` client maps the status to its class. */
export class HttpError extends AgentJetServerError {
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  constructor(status: number, code: string, message: string, opts: { type?: string; param?: string | null; cause?: unknown } = {}) {
    super(code, message, { cause: opts.cause, httpStatus: status });
    this.status = status;
    this.type = opts.type ?? typeForStatus(status);
    this.param = opts.param ?? null;
  }
}

function typeForStatus(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 404) return "not_found_error";
  if (status === 409) return "conflict_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

export function toErrorBody(err: HttpError): OpenAIErrorBody {
  return { error: { message: err.message, type: err.type, code: err.code, param: err.param } };
}

export const unauthorized = (message: string): HttpError => new HttpError(401, "AJ_ERR_INVALID_API_KEY", message);
export const conflict = (message: string): HttpError => new HttpError(409, "AJ_ERR_EPISODE_CLOSED", message);
