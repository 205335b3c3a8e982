import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ServerContext } from "../app/server-context.ts";
import type { ChatTurnMessage } from "../tokenizers/tokenizer.ts";
import type { Completion } from "./completion.ts";
import { type Completions, episodeKey } from "./completions.ts";
import { HttpError } from "./errors.ts";
import { createResponseStream, newResponseIds, toInputItem, toOutputItems, toResponseObject } from "./render-response.ts";
import { createTextStream, fromCompletionRequest, toTextCompletion } from "./legacy-completions.ts";
import { ResponseStore } from "./response-store.ts";
import { fromResponsesRequest, toConversation } from "./responses-input.ts";
import { parseBody } from "./parse-body.ts";
import { CompletionRequestSchema, type ModelList, ResponsesRequestSchema } from "./schemas.ts";
import { SseWriter } from "./sse-writer.ts";

/** Fastify's content type for the JSON it serializes, for JSON text the route writes itself. */
export const JSON_UTF8 = "application/json; charset=utf-8";

/** Turn messages as chat-completions JSON: the record of a call that came another way reads like a chat call's. */
function toChatMessages(messages: readonly ChatTurnMessage[]): unknown[] {
  return messages.map((m) => {
    const out: Record<string, unknown> = { role: m.role, content: m.content };
    if (m.toolCalls && m.toolCalls.length > 0) out.tool_calls = m.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
    if (m.toolCallId !== undefined) out.tool_call_id = m.toolCallId;
    return out;
  });
}

/** A stream's writer on a fastify reply, taken over from fastify on its first write. */
const sseOf = (reply: FastifyReply): SseWriter => new SseWriter(reply.raw, () => reply.hijack());

/**
 * The OpenAI-compatible routes: chat completions, the Responses API and legacy completions (policy or
 * frozen agent, by key), and the model list. All three turn their body into one `GenerationRequest`, so
 * one conversation records the same tokens whichever route carried it. The chat route's plain requests
 * usually arrive by the raw chat route instead (`server/app/raw-chat-route.ts`), which serves them with
 * the same `Completions`.
 */
export async function openaiRoutes(app: FastifyInstance, ctx: ServerContext, calls: Completions): Promise<void> {
  const started = Math.floor(Date.now() / 1000);
  const responses = new ResponseStore();
  const authorize = (request: FastifyRequest) => calls.authorize(episodeKey(request.headers.authorization, request.raw.socket as object | null));
  const { complete, streamed } = calls;

  app.get("/v1/models", { config: { auth: "public" } }, async (): Promise<ModelList> => ({
    object: "list",
    data: [
      ...[...ctx.policies.keys()].map((id) => ({ id, object: "model" as const, created: started, owned_by: "agentjet-policy" })),
      ...[...ctx.frozen.keys()].map((id) => ({ id, object: "model" as const, created: started, owned_by: "agentjet-frozen" })),
    ],
  }));

  app.post("/v1/chat/completions", { config: { auth: "episode-key" } }, async (request, reply) => {
    const json = await calls.chat(authorize(request), request.body, () => sseOf(reply));
    return json === null ? reply : reply.header("content-type", JSON_UTF8).send(json);
  });

  app.post("/v1/completions", { config: { auth: "episode-key" } }, async (request, reply) => {
    const auth = authorize(request);
    const body = parseBody(CompletionRequestSchema, request.body);
    const req = fromCompletionRequest(body);
    const record = { rawMessages: toChatMessages(req.messages), rawTools: null, idPrefix: "cmpl" };
    if (!body.stream) return toTextCompletion(await complete(auth, req, record));
    const sse = sseOf(reply);
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
    const sse = sseOf(reply);
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
