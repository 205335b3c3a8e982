import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ServerContext } from "../app/server-context.ts";
import { completeWithFrozen } from "./complete-frozen.ts";
import { completeWithPolicy } from "./complete-policy.ts";
import { conflict, HttpError, unauthorized } from "./errors.ts";
import { toResponse, toSseBody } from "./render-completion.ts";
import { ChatCompletionRequestSchema, type ModelList } from "./schemas.ts";
import { parseBody } from "./parse-body.ts";

function bearer(request: FastifyRequest): string {
  const h = request.headers.authorization;
  if (!h) throw unauthorized("missing API key (Authorization: Bearer sk-aj-...)");
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  if (!m) throw unauthorized("malformed Authorization header; expected 'Bearer <key>'");
  return m[1]!;
}

/** The OpenAI-compatible routes: chat completions (policy or frozen agent, by key) and the model list. */
export async function openaiRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  const started = Math.floor(Date.now() / 1000);

  app.get("/v1/models", { config: { auth: "public" } }, async (): Promise<ModelList> => ({
    object: "list",
    data: [
      ...[...ctx.policies.keys()].map((id) => ({ id, object: "model" as const, created: started, owned_by: "agentjet-policy" })),
      ...[...ctx.frozen.keys()].map((id) => ({ id, object: "model" as const, created: started, owned_by: "agentjet-frozen" })),
    ],
  }));

  app.post("/v1/chat/completions", { config: { auth: "episode-key" } }, async (request, reply) => {
    const auth = ctx.store.authorize(bearer(request));
    if (auth.kind === "unauthorized") throw unauthorized(auth.message);
    if (auth.kind === "conflict") throw conflict(auth.message);
    const body = parseBody(ChatCompletionRequestSchema, request.body);
    const raw = request.body as { messages: unknown[]; tools?: unknown[] | null };
    const rawTools = Array.isArray(raw.tools) ? raw.tools : null;
    const common = { store: ctx.store, episodeId: auth.episode.episodeId, agentId: auth.agentId, attempt: auth.episode.attempt };
    let completion;
    if (auth.binding.kind === "policy") {
      const policy = ctx.policies.get(auth.binding.target);
      if (!policy) throw new HttpError(404, "AJ_ERR_POLICY_NOT_FOUND", `no policy '${auth.binding.target}'`);
      completion = await completeWithPolicy({ ...common, policy, sampling: ctx.sampling, request: body, rawMessages: raw.messages, rawTools });
    } else {
      const model = ctx.frozen.get(auth.binding.target);
      if (!model) throw new HttpError(404, "AJ_ERR_FROZEN_NOT_FOUND", `no frozen model '${auth.binding.target}'`);
      completion = await completeWithFrozen({ ...common, model, body: request.body as Record<string, unknown>, rawMessages: raw.messages, rawTools });
    }
    if (!body.stream) return toResponse(completion);
    return reply
      .header("content-type", "text/event-stream; charset=utf-8")
      .header("cache-control", "no-cache")
      .send(toSseBody(completion, body.stream_options?.include_usage === true));
  });
}
