import type { ServerContext } from "../app/server-context.ts";
import type { Authorization } from "../episodes/outcomes.ts";
import { completeWithFrozen } from "./complete-frozen.ts";
import { completeWithPolicy } from "./complete-policy.ts";
import type { Completion, CompletionSink } from "./completion.ts";
import { conflict, HttpError, missingApiKey, toHttpError, unauthorized } from "./errors.ts";
import { checkToolChoice, type GenerationRequest } from "./generation-request.ts";
import { parseBody } from "./parse-body.ts";
import { createChatStream, toResponseJson } from "./render-completion.ts";
import { ChatCompletionRequestSchema } from "./schemas.ts";
import { simpleChatRequest } from "./simple-chat-request.ts";
import type { SseWriter } from "./sse-writer.ts";
import { fromChatRequest } from "./to-turn-messages.ts";

/** An episode key's authorization that lets a call through. */
export type Authorized = Extract<Authorization, { kind: "ok" }>;

/** The request as received, for the call's record; `idPrefix` starts the completion id. */
export interface RecordedRequest {
  rawMessages: unknown[];
  rawTools: unknown[] | null;
  idPrefix: string;
}

/** Where a failed stream's error is logged (fastify's logger). */
export interface ErrorLog {
  error(obj: object, msg: string): void;
}

/** Completions of every OpenAI route, whichever HTTP path carried them (the fastify routes, the raw chat route). */
export interface Completions {
  /** The key's episode and agent; a refused key throws its 401 or 409. */
  authorize(key: string): Authorized;
  /** Serves one request with the agent's policy or frozen model, streaming into `sink` when given. */
  complete(auth: Authorized, req: GenerationRequest, record: RecordedRequest, sink?: CompletionSink): Promise<Completion>;
  /** Runs a streamed request: errors before the first event are thrown (a JSON error answers), later ones end the stream with an error event. */
  streamed(sse: SseWriter, run: () => Promise<void>, responsesApi?: boolean): Promise<void>;
  /**
   * A chat completion of a parsed body: its JSON text, or null once it has been streamed into the writer
   * `sse()` makes (only a `stream: true` body makes one).
   */
  chat(auth: Authorized, body: unknown, sse: () => SseWriter): Promise<string | null>;
}

/** The Authorization header's key (`Bearer <key>`); a missing or malformed header is a 401. */
function bearerKey(header: string | undefined): string {
  if (!header) throw missingApiKey();
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

/** The episode key of a request's Authorization header, remembered per connection (`socket`). */
export function episodeKey(header: string | undefined, socket: object | null): string {
  const last = socket ? connectionKeys.get(socket) : undefined;
  if (last !== undefined && last.header === header) return last.key;
  const key = bearerKey(header);
  if (socket && header !== undefined) connectionKeys.set(socket, { header, key });
  return key;
}

export function createCompletions(ctx: ServerContext, log: ErrorLog): Completions {
  /**
   * What a call records whichever model serves it (the episode, the agent, the request as received), with
   * `served`, what serves it, added to the same object. Not `{ ...recorded, policy }`: a spread followed by
   * more properties took V8's slow path on every call (about 6 us and 1.5 KB of garbage per call).
   */
  const servedCall = <S extends object>(auth: Authorized, req: GenerationRequest, record: RecordedRequest, served: S) =>
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

  const complete: Completions["complete"] = (auth, req, record, sink) => {
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

  const streamed: Completions["streamed"] = async (sse, run, responsesApi = false) => {
    try {
      await run();
    } catch (err) {
      if (!sse.started) throw err;
      const http = toHttpError(err);
      if (http.status >= 500) log.error({ err }, "stream failed");
      // The Responses API's error event, or the chat API's error object in a data line.
      if (responsesApi) sse.send({ type: "error", code: http.code, message: http.message, param: http.param }, "error");
      else sse.send({ error: { message: http.message, type: http.type, code: http.code, param: http.param } });
      sse.end();
    }
  };

  return {
    authorize(key) {
      const auth = ctx.store.authorize(key);
      if (auth.kind === "unauthorized") throw unauthorized(auth.message);
      if (auth.kind === "conflict") throw conflict(auth.message);
      return auth;
    },
    complete,
    streamed,
    async chat(auth, raw, sse) {
      const body = simpleChatRequest(raw) ?? parseBody(ChatCompletionRequestSchema, raw);
      const received = raw as { messages: unknown[]; tools?: unknown[] | null };
      const record = { rawMessages: received.messages, rawTools: Array.isArray(received.tools) ? received.tools : null, idPrefix: "chatcmpl" };
      const req = fromChatRequest(body);
      if (!body.stream) return toResponseJson(await complete(auth, req, record));
      const writer = sse();
      const stream = createChatStream(writer, req.n, body.stream_options?.include_usage === true);
      await streamed(writer, async () => stream.finish(await complete(auth, req, record, stream)));
      return null;
    },
  };
}
