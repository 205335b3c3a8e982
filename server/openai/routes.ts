import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ServerContext } from "../app/server-context.ts";
import type { ChatTurnMessage } from "../tokenizers/tokenizer.ts";
import { completeWithFrozen } from "./complete-frozen.ts";
import { completeWithPolicy } from "./complete-policy.ts";
import type { Completion, CompletionSink } from "./completion.ts";
import { conflict, HttpError, toHttpError, unauthorized } from "./errors.ts";
import { checkToolChoice, type GenerationRequest } from "./generation-request.ts";
import { parseBody } from "./parse-body.ts";
import { createChatStream, toResponseJson } from "./render-completion.ts";
import { createResponseStream, newResponseIds, toInputItem, toOutputItems, toResponseObject } from "./render-response.ts";
import { createTextStream, fromCompletionRequest, toTextCompletion } from "./legacy-completions.ts";
import { ResponseStore } from "./response-store.ts";
import { fromResponsesRequest, toConversation } from "./responses-input.ts";
import { ChatCompletionRequestSchema, CompletionRequestSchema, type ModelList, ResponsesRequestSchema } from "./schemas.ts";
import { simpleChatRequest } from "./simple-chat-request.ts";
import { SseWriter } from "./sse-writer.ts";
import { fromChatRequest } from "./to-turn-messages.ts";

/** Fastify's content type for the JSON it serializes, for JSON text the route writes itself. */
const JSON_UTF8 = "application/json; charset=utf-8";

function bearer(header: string | undefined): string {
  if (!header) throw unauthorized("missing API key (Authorization: Bearer sk-aj-...)");
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw unauthorized("malformed Authorization header; expected 'Bearer <key>'");
  return m[1]!;
}

/**
 * The key each connection last presented, with the header it came in: an agent sends its key on every
 * call over the same keep-alive connection, so the next call's header is compared with this one (equal
 * text) instead of being parsed again and its key hashed again for the lookup.
 */
const connectionKeys = new WeakMap<object, { header: string; key: string }>();

function episodeKey(request: FastifyRequest): string {
  const header = request.headers.authorization;
  const socket = request.raw.socket as object | null;
  const last = socket ? connectionKeys.get(socket) : undefined;
  if (last !== undefined && last.header === header) return last.key;
  const key = bearer(header);
  if (socket && header !== undefined) connectionKeys.set(socket, { header, key });
  return key;
}

/** Turn messages as chat-completions JSON: the record of a call that came another way reads like a chat call's. */
function toChatMessages(messages: readonly ChatTurnMessage[]): unknown[] {
  return messages.map((m) => {
    const out: Record<string, unknown> = { role: m.role, content: m.content };
    if (m.toolCalls && m.toolCalls.length > 0) out.tool_calls = m.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
    if (m.toolCallId !== undefined) out.tool_call_id = m.toolCallId;
    return out;
  });
}

/** The request as received, for the call's record; `idPrefix` starts the completion id. */
interface RecordedRequest {
  rawMessages: unknown[];
  rawTools: unknown[] | null;
  idPrefix: string;
}

/**
 * The OpenAI-compatible routes: chat completions, the Responses API and legacy completions (policy or
 * frozen agent, by key), and the model list. All three turn their body into one `GenerationRequest`, so
 * one conversation records the same tokens whichever route carried it.
 */
export async function openaiRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  const started = Math.floor(Date.now() / 1000);
  const responses = new ResponseStore();

  const authorize = (request: FastifyRequest) => {
    const auth = ctx.store.authorize(episodeKey(request));
    if (auth.kind === "unauthorized") throw unauthorized(auth.message);
    if (auth.kind === "conflict") throw conflict(auth.message);
    return auth;
  };

  /**
   * What a call records whichever model serves it (the episode, the agent, the request as received), with
   * `served`, what serves it, added to the same object. Not `{ ...recorded, policy }`: a spread followed by
   * more properties took V8's slow path on every call (about 6 us and 1.5 KB of garbage per call).
   */
  const servedCall = <S extends object>(auth: ReturnType<typeof authorize>, req: GenerationRequest, record: RecordedRequest, served: S) =>
    Object.assign(
      {
        store: ctx.store,
        episodeId: auth.episode.episodeId,
        agentId: auth.agentId,
        attempt: auth.episode.attempt,
        request: req,
        rawMessages: record.rawMessages,
        rawTools: record.rawTools,
        idPrefix: record.idPrefix,
      },
      served,
    );

  /** Serves one request with the agent's policy or frozen model. */
  const complete = (auth: ReturnType<typeof authorize>, req: GenerationRequest, record: RecordedRequest, sink?: CompletionSink): Promise<Completion> => {
    checkToolChoice(req);
    const { episode, binding } = auth;
    if (binding.kind === "policy") {
      const policy = ctx.policies.get(binding.target);
      if (!policy) throw new HttpError(404, "AJ_ERR_POLICY_NOT_FOUND", `no policy '${binding.target}'`);
      return completeWithPolicy(servedCall(auth, req, record, { samplingSeed: episode.samplingSeed, policy, sampling: ctx.sampling }), sink);
    }
    const model = ctx.frozen.get(binding.target);
    if (!model) throw new HttpError(404, "AJ_ERR_FROZEN_NOT_FOUND", `no frozen model '${binding.target}'`);
    return completeWithFrozen(servedCall(auth, req, record, { model }), sink);
  };

  /** Runs a streamed request: errors before the first event answer as JSON, later ones end the stream with an error event. */
  const streamed = async (sse: SseWriter, run: () => Promise<void>, responsesApi = false): Promise<void> => {
    try {
      await run();
    } catch (err) {
      if (!sse.started) throw err;
      const http = toHttpError(err);
      if (http.status >= 500) app.log.error({ err }, "stream failed");
      // The Responses API's error event, or the chat API's error object in a data line.
      if (responsesApi) sse.send({ type: "error", code: http.code, message: http.message, param: http.param }, "error");
      else sse.send({ error: { message: http.message, type: http.type, code: http.code, param: http.param } });
      sse.end();
    }
  };

  app.get("/v1/models", { config: { auth: "public" } }, async (): Promise<ModelList> => ({
    object: "list",
    data: [
      ...[...ctx.policies.keys()].map((id) => ({ id, object: "model" as const, created: started, owned_by: "agentjet-policy" })),
      ...[...ctx.frozen.keys()].map((id) => ({ id, object: "model" as const, created: started, owned_by: "agentjet-frozen" })),
    ],
  }));

  app.post("/v1/chat/completions", { config: { auth: "episode-key" } }, async (request, reply) => {
    const auth = authorize(request);
    const body = simpleChatRequest(request.body) ?? parseBody(ChatCompletionRequestSchema, request.body);
    const raw = request.body as { messages: unknown[]; tools?: unknown[] | null };
    const record = { rawMessages: raw.messages, rawTools: Array.isArray(raw.tools) ? raw.tools : null, idPrefix: "chatcmpl" };
    const req = fromChatRequest(body);
    if (!body.stream) {
      const json = toResponseJson(await complete(auth, req, record));
      return reply.header("content-type", JSON_UTF8).send(json);
    }
    const sse = new SseWriter(reply);
    const stream = createChatStream(sse, req.n, body.stream_options?.include_usage === true);
    await streamed(sse, async () => stream.finish(await complete(auth, req, record, stream)));
    return reply;
  });

  app.post("/v1/completions", { config: { auth: "episode-key" } }, async (request, reply) => {
    const auth = authorize(request);
    const body = parseBody(CompletionRequestSchema, request.body);
    const req = fromCompletionRequest(body);
    const record = { rawMessages: toChatMessages(req.messages), rawTools: null, idPrefix: "cmpl" };
    if (!body.stream) return toTextCompletion(await complete(auth, req, record));
    const sse = new SseWriter(reply);
    const stream = createTextStream(sse, body.stream_options?.include_usage === true);
    await streamed(sse, async () => stream.finish(await complete(auth, req, record, stream)));
    return reply;
  });

  app.post("/v1/responses", { config: { auth: "episode-key" } }, async (request, reply) => {
    const auth = authorize(request);
    const body = parseBody(ResponsesRequestSchema, request.body);
    const episodeId = auth.episode.episodeId;
    let prior: ChatTurnMessage[] = [];
    if (body.previous_response_id) {
      const found = responses.conversation(episodeId, body.previous_response_id);
      if (!found) {
        throw new HttpError(400, "AJ_ERR_INVALID_REQUEST", `previous_response_id: no response '${body.previous_response_id}' in this episode`, { param: "previous_response_id" });
      }
      prior = found;
    }
    const input = typeof body.input === "string" ? [{ type: "message" as const, role: "user" as const, content: body.input }] : body.input;
    const conversation = [...prior, ...toConversation(input, (id) => responses.item(episodeId, id))];
    const req = fromResponsesRequest(body, conversation);
    const rawTools = req.tools.length > 0 ? req.tools.map((t) => ({ type: "function", function: t })) : null;
    const record = { rawMessages: toChatMessages(req.messages), rawTools, idPrefix: "resp" };
    const ids = newResponseIds();
    const remember = (c: Completion) => {
      const choice = c.choices[0]!;
      const output = toOutputItems(choice, ids);
      for (const item of output) responses.putItem(episodeId, item.id, toInputItem(item));
      const turn: ChatTurnMessage = { role: "assistant", content: choice.content ?? "" };
      if (choice.toolCalls.length > 0) turn.toolCalls = choice.toolCalls.map((t) => ({ id: t.id, name: t.function.name, arguments: t.function.arguments }));
      responses.putConversation(episodeId, ids.response, [...conversation, turn]);
      return output;
    };
    if (!body.stream) {
      const c = await complete(auth, req, record);
      const output = remember(c);
      return toResponseObject(body, { id: ids.response, created: c.created, model: c.model }, { completion: c, output });
    }
    const sse = new SseWriter(reply);
    const stream = createResponseStream(sse, body, ids);
    await streamed(
      sse,
      async () => {
        const c = await complete(auth, req, record, stream);
        stream.finish(c, remember(c));
      },
      true,
    );
    return reply;
  });
}
