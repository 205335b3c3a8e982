import type { ChatCompletionRequest } from "./schemas.ts";

/**
 * The chat completion request most agents send (string contents, plain sampling fields, at most plain
 * assistant tool calls), recognised without zod: validating every request through the schema was a
 * good part of the proxy's cost per call. Returns the body itself, typed, only when
 * `ChatCompletionRequestSchema` certainly accepts it and every field the server reads is what zod would
 * give (zod's output differs only in unknown keys, which it drops and the server never reads, and a tool
 * call's `type`, which it defaults and the server never reads); anything else returns null and goes
 * through the schema, which gives its errors.
 */
export function simpleChatRequest(body: unknown): ChatCompletionRequest | null {
  if (!isRecord(body)) return null;
  if (typeof body.model !== "string" || body.model.length === 0) return null;
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return null;
  for (let i = 0; i < messages.length; i++) if (!simpleMessage(messages[i])) return null;
  // structured fields go through the schema
  if (!absent(body.tools) || !absent(body.tool_choice) || !absent(body.response_format) || !absent(body.chat_template_kwargs)) return null;
  if (!absent(body.stop) || !absent(body.stream_options)) return null;
  if (!optional(body.stream, isBoolean) || !optional(body.parallel_tool_calls, isBoolean) || !optional(body.logprobs, isBoolean)) return null;
  if (!optional(body.max_tokens, isPositiveInt) || !optional(body.max_completion_tokens, isPositiveInt)) return null;
  if (!optional(body.temperature, (v) => typeof v === "number" && v >= 0 && v <= 2)) return null;
  if (!optional(body.top_p, (v) => typeof v === "number" && v > 0 && v <= 1)) return null;
  if (!optional(body.seed, Number.isSafeInteger)) return null;
  if (!optional(body.top_logprobs, (v) => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= 20)) return null;
  if (!optional(body.n, (v) => Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= 16)) return null;
  if (!optional(body.user, isString)) return null;
  if (!optional(body.frequency_penalty, isPenalty) || !optional(body.presence_penalty, isPenalty) || !absent(body.logit_bias)) return null;
  return body as ChatCompletionRequest;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const isString = (v: unknown): boolean => typeof v === "string";
const isBoolean = (v: unknown): boolean => typeof v === "boolean";
const isPenalty = (v: unknown): boolean => typeof v === "number" && v >= -2 && v <= 2;
const isPositiveInt = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) > 0;

/** Absent: what `.nullish()` takes as nothing. */
function absent(v: unknown): boolean {
  return v === undefined || v === null;
}

/** A `.nullish()` field: absent, or a value that passes. */
function optional(v: unknown, ok: (v: unknown) => boolean): boolean {
  return v === undefined || v === null || ok(v);
}

/** `name` is `.optional()` (a null is the schema's to refuse). */
function optionalName(v: unknown): boolean {
  return v === undefined || typeof v === "string";
}

function simpleMessage(m: unknown): boolean {
  if (!isRecord(m)) return false;
  switch (m.role) {
    case "system":
    case "developer":
    case "user":
      return typeof m.content === "string" && optionalName(m.name);
    case "tool":
      return typeof m.content === "string" && typeof m.tool_call_id === "string" && m.tool_call_id.length > 0;
    case "assistant":
      return optional(m.content, isString) && optionalName(m.name) && optional(m.refusal, isString) && optional(m.tool_calls, simpleToolCalls);
    default:
      return false;
  }
}

function simpleToolCalls(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  for (const c of v) {
    if (!isRecord(c) || typeof c.id !== "string" || !(c.type === undefined || c.type === "function")) return false;
    const f = c.function;
    if (!isRecord(f) || typeof f.name !== "string" || f.name.length === 0 || typeof f.arguments !== "string") return false;
  }
  return true;
}
