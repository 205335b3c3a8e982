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
  /** The body's bytes, in the chunks it arrived in (transferred). */
  body: Uint8Array[];
  /** Send long strings back in shared memory (`LongString`): the event loop can make strings of it uncopied. */
  longStrings: boolean;
}

/** A string of at least this many characters crosses back in shared memory when the task asks for it. */
export const LONG_STRING = 1 << 17;

/**
 * A long string of the parsed body, left out of it (null in its place): its characters as Latin-1 bytes
 * when it has no character past U+00FF, else as UTF-16 units, written here, in shared memory.
 */
export interface LongString {
  /** Where it goes: keys and indexes from the body down. */
  path: Array<string | number>;
  text: Uint8Array | Uint16Array;
}

/**
 * The parsed body; `invalid` for a body that is not valid JSON (or is poisoned); `too-deep` for one nested
 * deeper than a request may be (it could not even cross back: the server parses it in place, and refuses it).
 */
export type JsonBodyResult = { ok: true; value: unknown; long: LongString[] } | { ok: false; why: "invalid" } | { ok: false; why: "too-deep"; text: string };

type SecureJsonParse = { parse(text: string, reviver: null, options: { protoAction: "error"; constructorAction: "error" }): unknown };
let parser: SecureJsonParse | undefined;

export default function parseJsonBody(task: JsonBodyTask): JsonBodyResult {
  parser ??= createRequire(import.meta.url)((workerData as JsonBodyThreadData).secureJsonParse) as SecureJsonParse;
  const text = Buffer.concat(task.body).toString("utf8");
  let value: unknown;
  try {
    value = parser.parse(text, null, { protoAction: "error", constructorAction: "error" });
  } catch {
    return { ok: false, why: "invalid" };
  }
  if (nestedDeeperThan(value, MAX_BODY_DEPTH)) return { ok: false, why: "too-deep", text };
  return { ok: true, value, long: task.longStrings ? takeLongStrings(value) : [] };
}

const PAST_LATIN1 = /[^\u0000-\u00ff]/;

function shared(s: string): Uint8Array | Uint16Array {
  if (!PAST_LATIN1.test(s)) {
    const bytes = new Uint8Array(new SharedArrayBuffer(s.length));
    Buffer.from(bytes.buffer).write(s, "latin1");
    return bytes;
  }
  const units = new Uint16Array(new SharedArrayBuffer(2 * s.length));
  // UTF-16 as it is, lone surrogates included (the platform is little-endian: external-string.ts)
  Buffer.from(units.buffer).write(s, "utf16le");
  return units;
}

/** The body's long strings, each taken out of it (its place set to null). The body is parsed JSON, nested no deeper than MAX_BODY_DEPTH. */
function takeLongStrings(body: unknown): LongString[] {
  const out: LongString[] = [];
  const visit = (node: unknown, path: Array<string | number>): void => {
    if (node === null || typeof node !== "object") return;
    const record = node as Record<string | number, unknown>;
    for (const key of Array.isArray(node) ? node.keys() : Object.keys(node)) {
      const v = record[key];
      if (typeof v === "string") {
        if (v.length < LONG_STRING) continue;
        out.push({ path: [...path, key], text: shared(v) });
        record[key] = null;
      } else if (v !== null && typeof v === "object") visit(v, [...path, key]);
    }
  };
  visit(body, []);
  return out;
}
