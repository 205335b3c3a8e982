import { InstanceReplySchema } from "../sdk/env/schemas.ts";
import { failed, ok } from "./outcome.ts";
import type { Outcome } from "./runtime.ts";

/** Checks one reply line from an instance. Anything malformed is that instance's protocol failure. */
export function parseReply(text: string, expectedId: number): Outcome<unknown> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return failed("protocol", `reply is not JSON: ${preview(text)}`);
  }
  const reply = InstanceReplySchema.safeParse(raw);
  if (!reply.success) return failed("protocol", `reply does not match the protocol: ${preview(text)}`);
  if (reply.data.id !== expectedId) return failed("protocol", `reply to request ${reply.data.id}, expected ${expectedId}`);
  if (!reply.data.ok) return thrown(reply.data.error.message);
  return ok(reply.data.result);
}

/** The failure of a call the plugin threw on. */
export function thrown(message: string): Outcome<never> {
  // A refused allocation surfaces as the plugin's own RangeError; it is still the memory limit.
  const kind = /allocation failed|out of memory/i.test(message) ? "oom" : "crash";
  return failed(kind, `the plugin threw: ${message}`);
}

function preview(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}
