import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import type { ErrorLog } from "../openai/completions.ts";
import { toErrorBody, toHttpError } from "../openai/errors.ts";
import type { OpenAIErrorBody } from "../openai/schemas.ts";

/** What a request that failed with `err` answers: its status and OpenAI-shaped body; a 5xx is logged on `log`. */
export function errorAnswer(err: unknown, log: ErrorLog): { status: number; body: OpenAIErrorBody } {
  const http = toHttpError(err);
  if (http.status >= 500) log.error({ err }, "request failed");
  return { status: http.status, body: toErrorBody(http) };
}

/** The error handler of a fastify app of ours: OpenAI's error shape, our codes, 5xx logged on `log`, else on the request's logger. */
export function errorHandler(log?: ErrorLog): (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => FastifyReply {
  return (err, request, reply) => {
    const { status, body } = errorAnswer(err, log ?? request.log);
    return reply.code(status).send(body);
  };
}

/** `errorHandler` on each request's own logger. */
export const answerError = errorHandler();

/**
 * fastify's `frameworkErrors`: errors of the router itself (a path parameter past `maxParamLength`, a
 * malformed URL) answered in the same shape, not fastify's default `{ statusCode, code: "FST_ERR_..." }`.
 */
export function answerFrameworkError(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const http = toHttpError(err);
  void reply.code(http.status).send(toErrorBody(http));
}
