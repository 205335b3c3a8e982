import { createRequire } from "node:module";
import { workerData } from "node:worker_threads";
import { MAX_BODY_DEPTH, nestedDeeperThan } from "../openai/nesting-depth.ts";

/**
 * The JSON body thread (piscina): parses a large request body off the event loop with fastify's own
 * parser (secure-json-parse, loaded by the path the server gives it), so the answer is what fastify's
 * default JSON parser would have given, prototype-poisoning checks included.
 */
export interface JsonBodyThreadData {
  /** Where secure-json-parse lives (fastify's copy). */
  secureJsonParse: string;
}

export interface JsonBodyTask {
  /** The body's bytes (transferred). */
  body: Uint8Array;
}

/**
 * The parsed body; `invalid` for a body that is not valid JSON (or is poisoned); `too-deep` for one nested
 * deeper than a request may be (it could not even cross back: the server parses it in place, and refuses it).
 */
export type JsonBodyResult = { ok: true; value: unknown } | { ok: false; why: "invalid" } | { ok: false; why: "too-deep"; text: string };

type SecureJsonParse = { parse(text: string, reviver: null, options: { protoAction: "error"; constructorAction: "error" }): unknown };
let parser: SecureJsonParse | undefined;

export default function parseJsonBody(task: JsonBodyTask): JsonBodyResult {
  parser ??= createRequire(import.meta.url)((workerData as JsonBodyThreadData).secureJsonParse) as SecureJsonParse;
  const text = Buffer.from(task.body.buffer, task.body.byteOffset, task.body.byteLength).toString("utf8");
  let value: unknown;
  try {
    value = parser.parse(text, null, { protoAction: "error", constructorAction: "error" });
  } catch {
    return { ok: false, why: "invalid" };
  }
  if (nestedDeeperThan(value, MAX_BODY_DEPTH)) return { ok: false, why: "too-deep", text };
  return { ok: true, value };
}
