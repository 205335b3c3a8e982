import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { toErrorBody, toHttpError } from "../openai/errors.ts";

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
