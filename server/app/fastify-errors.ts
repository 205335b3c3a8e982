import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { HttpError, toErrorBody } from "../openai/errors.ts";

/**
 * Our code for a client error fastify raised itself (body parsing, routing limits, validation): the codes
 * clients can look up in docs/errors.md, never fastify's own `FST_ERR_*`.
 */
function codeFor(err: FastifyError, status: number): string {
  if (err.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE" || status === 415) return "AJ_ERR_CONTENT_TYPE";
  if (err.code === "FST_ERR_CTP_BODY_TOO_LARGE" || status === 413) return "AJ_ERR_BODY_TOO_LARGE";
  if (err.code?.startsWith("AJ_ERR_")) return err.code;
  return "AJ_ERR_INVALID_REQUEST";
}

/** Any error a route or fastify raised, as the error we answer: a client error keeps its status and message; anything else is a 500 that hides its cause. */
export function toHttpError(err: FastifyError): HttpError {
  if (err instanceof HttpError) return err;
  const status = err.statusCode ?? 500;
  if (status >= 400 && status < 500) return new HttpError(status, codeFor(err, status), err.message, { cause: err });
  return new HttpError(500, "AJ_ERR_INTERNAL", "internal server error", { cause: err });
}

/** The error handler of every fastify app of ours: OpenAI's error shape, our codes, 5xx logged. */
export function answerError(err: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const http = toHttpError(err);
  if (http.status >= 500) request.log.error({ err }, "request failed");
  return reply.code(http.status).send(toErrorBody(http));
}

/**
 * fastify's `frameworkErrors`: errors of the router itself (a path parameter past `maxParamLength`, a
 * malformed URL) answered in the same shape, not fastify's default `{ statusCode, code: "FST_ERR_..." }`.
 */
export function answerFrameworkError(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const http = toHttpError(err);
  void reply.code(http.status).send(toErrorBody(http));
}
