import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { FastifyBaseLogger } from "fastify";
import { checkDepth } from "../openai/check-depth.ts";
import { type Completions, type ErrorLog, episodeKey } from "../openai/completions.ts";
import { HttpError } from "../openai/errors.ts";
import { JSON_UTF8 } from "../openai/routes.ts";
import { SseWriter } from "../openai/sse-writer.ts";
import type { HostCheck } from "./auth.ts";
import { errorAnswer } from "./fastify-errors.ts";
import { INLINE_BYTES } from "./json-body.ts";

/** Takes a request at the HTTP server, ahead of fastify (true), or returns false having touched nothing. */
export type RawRoute = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * Puts a raw route in front of the server's request listeners (fastify's): a request it does not take
 * goes on to them as if it were not there. `current` is asked on every request (null: none now).
 */
export function installRawRoute(server: Server, current: () => RawRoute | null): void {
  const listeners = server.listeners("request") as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  server.removeAllListeners("request");
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const route = current();
    if (route !== null && route(req, res)) return;
    for (const l of listeners) l.call(server, req, res);
  });
}

/**
 * A request's Host check, remembered per connection with the header it passed on: an agent sends the same
 * Host on every call over a keep-alive connection.
 */
export function connectionHostCheck(check: HostCheck): (req: IncomingMessage) => boolean {
  const hosts = new WeakMap<object, { host: string | undefined; ok: boolean }>();
  return (req) => {
    const socket = req.socket as object;
    const host = req.headers.host;
    const last = hosts.get(socket);
    if (last !== undefined && last.host === host) return last.ok;
    const ok = check(req.socket.localAddress, host);
    hosts.set(socket, { host, ok });
    return ok;
  };
}

export interface RawChatOptions {
  calls: Completions;
  hostAllowed: HostCheck;
  /** The app's body limit (a longer body goes to fastify, which refuses it). */
  bodyLimit: number;
  /** fastify's own JSON body parser (its prototype-poisoning checks; throws its errors). */
  parseJson: (text: string) => unknown;
  /** Where access lines go (at `info`, as fastify writes them). */
  log: FastifyBaseLogger;
  /** Where a 5xx is logged when no access line names the request (the app's `errorLog`). */
  errorLog: ErrorLog;
}

/** The path the raw route serves. */
const CHAT_PATH = "/v1/chat/completions";

/**
 * The chat completion route as most agent calls meet it, served at the HTTP server rather than through
 * fastify: a plain JSON POST of a known, small length (at most `INLINE_BYTES`), from a Host the server
 * answers to, with a key. Every other request to the path (no key, another content type, a large or
 * chunked body, a server closing) goes on to the fastify route, which answers or refuses it.
 *
 * Why: fastify's request pipeline (routing, three async hooks, the content-type parser, the reply's send
 * path) cost about as much event-loop time per call as everything the proxy itself does, and the chat route
 * is the one every step of every episode calls (`bench/proxy.bench.ts`). What fastify checks for this
 * path is done here the same way: the Host check (`createHostCheck`), the body limit, fastify's own JSON
 * parser, the nesting limit, errors in the same shape and logged the same (5xx), and the same access log
 * lines at `info`. The completion itself is the fastify route's (`Completions.chat`).
 */
export function createRawChatRoute(o: RawChatOptions): RawRoute {
  const limit = Math.min(o.bodyLimit, INLINE_BYTES);
  const hostAllowed = connectionHostCheck(o.hostAllowed);
  const accessLog = createAccessLog(o.log);
  return (req, res) => {
    if (req.method !== "POST" || req.url !== CHAT_PATH) return false;
    const h = req.headers;
    if (h.authorization === undefined || !isPlainJson(h["content-type"]) || h["transfer-encoding"] !== undefined || h.expect !== undefined || h.upgrade !== undefined) return false;
    const length = bodyLength(h["content-length"], limit);
    if (length === null || !hostAllowed(req)) return false;
    const log = accessLog(req, res) ?? o.errorLog;
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      if (bytes.length !== length) return answerError(res, new HttpError(400, "AJ_ERR_INVALID_REQUEST", "Request body size did not match Content-Length"), log);
      let body: unknown;
      try {
        body = o.parseJson(bytes.toString("utf8"));
      } catch (err) {
        return answerError(res, err, log);
      }
      serve(o.calls, req, res, body).catch((err: unknown) => answerError(res, err, log));
    });
    // a request whose client went away has no one to answer
    req.on("error", () => {});
    return true;
  };
}

async function serve(calls: Completions, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
  checkDepth(body, "body");
  const auth = calls.authorize(episodeKey(req.headers.authorization, req.socket));
  const json = await calls.chat(auth, body, () => new SseWriter(res));
  if (json === null) return;
  res.writeHead(200, { "content-type": JSON_UTF8, "content-length": Buffer.byteLength(json) });
  res.end(json);
}

/** An error answered as fastify's error handler answers it (`errorAnswer`: our shape, a 5xx logged). */
function answerError(res: ServerResponse, err: unknown, log: ErrorLog): void {
  const { status, body } = errorAnswer(err, log);
  if (res.headersSent) {
    res.end();
    return;
  }
  const json = JSON.stringify(body);
  res.writeHead(status, { "content-type": JSON_UTF8, "content-length": Buffer.byteLength(json) });
  res.end(json);
}

/** `application/json`, bare or with a UTF-8 charset: what fastify's JSON parser takes. */
function isPlainJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const t = contentType.toLowerCase();
  return t === "application/json" || t === "application/json; charset=utf-8" || t === "application/json;charset=utf-8";
}

/** A Content-Length of 1..limit bytes, else null (no length, none, or too long for this route). */
function bodyLength(header: string | undefined, limit: number): number | null {
  if (header === undefined || !/^[0-9]{1,9}$/.test(header)) return null;
  const n = Number(header);
  return n > 0 && n <= limit ? n : null;
}

/** Whether the logger writes fastify's per-request lines (`info`); fastify's no-op logger has no levels. */
function logsRequests(log: FastifyBaseLogger): boolean {
  const pino = log as FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean };
  return typeof pino.isLevelEnabled === "function" && pino.isLevelEnabled("info");
}

/**
 * fastify's two access-log lines of a request it did not route (`incoming request`, `request completed`),
 * when `log` writes `info`: a function that writes them for one request and returns the request's logger
 * (null when the logger is quieter). Request ids are `chat-<n>`, apart from fastify's `req-<n>`.
 */
export function createAccessLog(log: FastifyBaseLogger): (req: IncomingMessage, res: ServerResponse) => FastifyBaseLogger | null {
  let n = 0;
  return (req, res) => {
    if (!logsRequests(log)) return null;
    n += 1;
    const child = log.child({ reqId: `chat-${n.toString(36)}` });
    const t0 = performance.now();
    // shaped for fastify's `req` serializer, which reads a fastify request's `host`, `ip` and `socket`
    const request = { method: req.method, url: req.url, headers: req.headers, host: req.headers.host, ip: req.socket.remoteAddress, socket: req.socket };
    child.info({ req: request }, "incoming request");
    res.on("finish", () => child.info({ res: { statusCode: res.statusCode }, responseTime: performance.now() - t0 }, "request completed"));
    return child;
  };
}
