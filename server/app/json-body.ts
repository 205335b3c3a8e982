import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { errorCodes, type FastifyInstance, type FastifyRequest } from "fastify";
import { Piscina } from "piscina";
import { bundleWorker } from "../worker-bundle.ts";
import { externalString } from "./external-string.ts";
import type { JsonBodyResult, JsonBodyTask, JsonBodyThreadData, LongString } from "./json-body-thread.ts";

/** Bodies up to this size are parsed on the event loop (well under a millisecond), larger ones on the JSON body thread. */
export const INLINE_BYTES = 64 * 1024;

const require = createRequire(import.meta.url);
const WORKER_SOURCES = ["./json-body-thread.ts", "../openai/nesting-depth.ts"].map((p) => fileURLToPath(new URL(p, import.meta.url)));

let pool: Promise<Piscina> | undefined;
let warned = false;

/** One thread per process parses large bodies; it starts with the first server, and idle it keeps nothing alive. */
function jsonBodyPool(): Promise<Piscina> {
  pool ??= bundleWorker({ name: "json-body", sources: WORKER_SOURCES }).then((filename) => {
    const workerData: JsonBodyThreadData = { secureJsonParse: createRequire(require.resolve("fastify")).resolve("secure-json-parse") };
    return new Piscina({ filename, workerData, minThreads: 1, maxThreads: 1, idleTimeout: 10 * 60_000 });
  });
  return pool;
}

/** The JSON body thread, or null when it cannot start (then bodies are parsed in place). */
async function startedPool(): Promise<Piscina | null> {
  try {
    return await jsonBodyPool();
  } catch (err) {
    if (!warned) console.warn(`agentjet: JSON body thread unavailable, parsing large bodies on the event loop: ${String(err)}`);
    warned = true;
    return null;
  }
}

/**
 * Parses a body on the JSON body thread: its chunks move there, uncopied, where each is memory of its own
 * (the socket's chunks are), else copied (a view into shared or pooled memory, or the same memory twice).
 */
async function parseOnThread(p: Piscina, chunks: readonly Buffer[]): Promise<JsonBodyResult> {
  const moved = new Set<ArrayBufferLike>();
  const body = chunks.map((c) => {
    const own = c.byteOffset === 0 && c.byteLength === c.buffer.byteLength && c.buffer instanceof ArrayBuffer && !moved.has(c.buffer);
    if (!own) return new Uint8Array(c);
    moved.add(c.buffer);
    return new Uint8Array(c.buffer);
  });
  const task: JsonBodyTask = { body, longStrings: externalString !== null };
  return (await p.run(task, { transferList: body.map((b) => b.buffer as ArrayBuffer) })) as JsonBodyResult;
}

type Done = (err: Error | null, body?: unknown) => void;

/** The body's long strings put back, each a string over the thread's memory (`externalString`): no 4 MB allocation on the event loop. */
function withLongStrings(body: unknown, long: readonly LongString[]): unknown {
  for (const { path, text } of long) {
    let parent = body as Record<string | number, unknown>;
    for (let i = 0; i < path.length - 1; i++) parent = parent[path[i]!] as Record<string | number, unknown>;
    parent[path[path.length - 1]!] = externalString!(text);
  }
  return body;
}

/**
 * A request's body as fastify's raw-body reader reads it (the same limits, length check and errors), as
 * the chunks it arrived in: a large one goes to the JSON body thread as they are (each chunk is memory of
 * its own, moved, not copied). Joining a 4 MB body on the event loop, at its end or chunk by chunk as it
 * arrived, wrote 4 MB of fresh pages there: 5-12 ms on these machines.
 *
 * Past `INLINE_BYTES`, the body is paused after each chunk until the event loop's next turn: the socket
 * otherwise hands over up to 32 reads (2 MB) in one turn, each copied by Node into new memory, 6 ms or more.
 */
function readBody(request: FastifyRequest, payload: NodeJS.ReadableStream & { receivedEncodedLength?: number }, limit: number, done: Done, then: (chunks: Buffer[], length: number) => void): void {
  const contentLength = Number(request.headers["content-length"]);
  if (contentLength > limit) {
    done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(), undefined);
    return;
  }
  const chunks: Buffer[] = [];
  let received = 0;
  let resuming = false;
  const resume = (): void => {
    resuming = false;
    payload.resume();
  };
  const onData = (chunk: Buffer | string): void => {
    // a custom preParsing stream may emit strings
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    const receivedEncoded = payload.receivedEncodedLength ?? 0;
    // the body may not exceed the limit, nor (checked at the end) the length it announced
    if (received + bytes.length > limit || receivedEncoded > limit) {
      stop();
      done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(), undefined);
      return;
    }
    chunks.push(bytes);
    received += bytes.length;
    if (received > INLINE_BYTES && !resuming) {
      payload.pause();
      resuming = true;
      setImmediate(resume);
    }
  };
  const onEnd = (err?: Error & { statusCode?: number }): void => {
    stop();
    if (err != null) {
      if (!(typeof err.statusCode === "number" && err.statusCode >= 400)) err.statusCode = 400;
      done(err, undefined);
      return;
    }
    if (!Number.isNaN(contentLength) && (payload.receivedEncodedLength || received) !== contentLength) {
      done(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH(), undefined);
      return;
    }
    then(chunks, received);
  };
  const stop = (): void => {
    payload.removeListener("data", onData);
    payload.removeListener("end", onEnd);
    payload.removeListener("error", onEnd);
  };
  payload.on("data", onData);
  payload.on("end", onEnd);
  payload.on("error", onEnd);
  payload.resume();
}

/**
 * JSON request bodies, and no others (any other content type is a 415), as fastify's default parser reads them (same limits, same errors, same
 * prototype-poisoning checks), except that a large one (a 4 MB message) is parsed on a thread: JSON.parse
 * of megabytes would hold the event loop, and every other request with it. The parsed body comes back a
 * turn before the request goes on, so receiving it and serving it are not one long stretch.
 */
export function registerJsonBody(app: FastifyInstance): void {
  const parseInPlace = app.getDefaultJsonParser("error", "error");
  // Bodies are JSON only: fastify's default text/plain parser handed a route the body as a string, which
  // its schema refused as a 400 ("expected object, received string") instead of a non-JSON body's 415.
  app.removeContentTypeParser("text/plain");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", (request, payload, done) => {
    readBody(request, payload as NodeJS.ReadableStream, request.routeOptions.bodyLimit, done as Done, (chunks, length) => {
      if (length <= INLINE_BYTES) return parseInPlace(request, Buffer.concat(chunks, length).toString("utf8"), done);
      void startedPool()
        .then(async (p) => {
          if (p === null) return parseInPlace(request, Buffer.concat(chunks, length).toString("utf8"), done);
          const r = await parseOnThread(p, chunks);
          await new Promise<void>((resolve) => setImmediate(resolve));
          if (r.ok) done(null, r.long.length === 0 ? r.value : withLongStrings(r.value, r.long));
          else if (r.why === "invalid") done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
          else parseInPlace(request, r.text, done);
        })
        .catch((err: unknown) => done(err as Error, undefined));
    });
  });
  void jsonBodyPool().catch(() => {});
}

/** fastify's own JSON parser (prototype poisoning refused, its errors thrown) as a function of the body's text, for a route that reads its body itself. */
export function jsonTextParser(app: FastifyInstance): (text: string) => unknown {
  const parse = app.getDefaultJsonParser("error", "error");
  return (text) => {
    let error: Error | null = null;
    let body: unknown;
    parse(null as never, text, (err, value) => {
      error = err;
      body = value;
    });
    if (error !== null) throw error;
    return body;
  };
}
