import { AgentJetError, ERROR_CODES } from "../../errors/index.ts";
import { AgentJetServerError } from "../errors.ts";
import type { OpenAIErrorBody } from "./schemas.ts";

/** An error that answers with an HTTP status in OpenAI's shape; the `openai` client maps the status to its class. */
export class HttpError extends AgentJetServerError {
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  /** The current state of what refused the request (an episode's, for `AJ_ERR_EPISODE_STATE`), for clients to branch on instead of the message. */
  readonly state: string | undefined;
  constructor(status: number, code: string, message: string, opts: { type?: string; param?: string | null; state?: string; cause?: unknown } = {}) {
    super(code, message, { cause: opts.cause, httpStatus: status });
    this.status = status;
    this.type = opts.type ?? typeForStatus(status);
    this.param = opts.param ?? null;
    this.state = opts.state;
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
  const body: OpenAIErrorBody = { error: { message: err.message, type: err.type, code: err.code, param: err.param } };
  if (err.state !== undefined) body.error.state = err.state;
  return body;
}

export const unauthorized = (message: string): HttpError => new HttpError(401, "AJ_ERR_INVALID_API_KEY", message);
/** A request to an episode-key route with no Authorization header: refused before its body is read (`installAuth`), as its handler would refuse it. */
export const missingApiKey = (): HttpError => unauthorized("missing API key (Authorization: Bearer sk-aj-...)");
export const conflict = (message: string): HttpError => new HttpError(409, "AJ_ERR_EPISODE_CLOSED", message);

/** Our code for a client error raised by fastify itself (body parsing, routing limits): never fastify's `FST_ERR_*`. */
function clientCode(code: string | undefined, status: number): string {
  if (code === "FST_ERR_CTP_INVALID_MEDIA_TYPE" || status === 415) return "AJ_ERR_CONTENT_TYPE";
  if (code === "FST_ERR_CTP_BODY_TOO_LARGE" || status === 413) return "AJ_ERR_BODY_TOO_LARGE";
  if (code?.startsWith("AJ_ERR_")) return code;
  return "AJ_ERR_INVALID_REQUEST";
}

/**
 * Any error as the one we answer: a client error keeps its status and message; a coded error registered
 * with a 5xx status (`AJ_ERR_NO_REPLICA`: 503, `AJ_ERR_RECORDING_FAILED`: 500) keeps its status and code,
 * with the code's public meaning for words (its own message can name internal paths and addresses);
 * anything else is a 500 `AJ_ERR_INTERNAL` that hides its cause.
 */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  const coded = err instanceof AgentJetError ? err : null;
  const e = err as { statusCode?: unknown; code?: unknown; message?: unknown };
  const status = coded?.httpStatus ?? (typeof e.statusCode === "number" ? e.statusCode : 500);
  const code = typeof e.code === "string" ? e.code : undefined;
  if (status >= 400 && status < 500) return new HttpError(status, clientCode(code, status), String(e.message ?? "bad request"), { cause: err });
  if (coded && status >= 500 && status < 600) return new HttpError(status, coded.code, ERROR_CODES.get(coded.code)?.meaning ?? "server error", { cause: err });
  return new HttpError(500, "AJ_ERR_INTERNAL", "internal server error", { cause: err });
}
