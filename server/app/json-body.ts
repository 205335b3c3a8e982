import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { errorCodes, type FastifyInstance } from "fastify";
import { Piscina } from "piscina";
import { bundleWorker } from "../worker-bundle.ts";
import type { JsonBodyResult, JsonBodyTask, JsonBodyThreadData } from "./json-body-thread.ts";

/** Bodies up to this size are parsed on the event loop (well under a millisecond), larger ones on the JSON body thread. */
const INLINE_BYTES = 64 * 1024;

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

/** Parses `body` on the JSON body thread. */
async function parseOnThread(p: Piscina, body: Buffer): Promise<JsonBodyResult> {
  // Buffer.concat gave the body its own memory: it moves to the thread, uncopied
  const own = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength && body.buffer instanceof ArrayBuffer;
  const bytes = own ? new Uint8Array(body.buffer) : new Uint8Array(body);
  const task: JsonBodyTask = { body: bytes };
  return (await p.run(task, { transferList: [bytes.buffer as ArrayBuffer] })) as JsonBodyResult;
}

/**
 * JSON request bodies as fastify's default parser reads them (same errors, same prototype-poisoning
 * checks), except that a large one (a 4 MB message) is parsed on a thread: JSON.parse of megabytes
 * would hold the event loop, and every other request with it.
 */
export function registerJsonBody(app: FastifyInstance): void {
  const parseInPlace = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    const bytes = body as Buffer;
    if (bytes.length <= INLINE_BYTES) return parseInPlace(request, bytes.toString("utf8"), done);
    void startedPool()
      .then(async (p) => {
        if (p === null) return parseInPlace(request, bytes.toString("utf8"), done);
        const r = await parseOnThread(p, bytes);
        if (r.ok) done(null, r.value);
        else if (r.why === "invalid") done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
        else parseInPlace(request, r.text, done);
      })
      .catch((err: unknown) => done(err as Error, undefined));
  });
  void jsonBodyPool().catch(() => {});
}
