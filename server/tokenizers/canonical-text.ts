import type { ChatTurnMessage } from "./tokenizer.ts";

/** Arguments compare by JSON value, so a client that re-serialises them still matches. */
function normalizeArguments(args: string): unknown {
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return args;
  }
}

/**
 * The canonical text of a message: what `text` matching and generation splicing compare. Tool-call ids
 * are left out (the server invents them); arguments compare by value.
 */
export function canonicalText(message: Pick<ChatTurnMessage, "content" | "toolCalls">): string {
  if (message.toolCalls === undefined || message.toolCalls.length === 0) return message.content;
  const calls = (message.toolCalls ?? []).map(
    (c) => `\n<tool_call>${JSON.stringify({ name: c.name, arguments: normalizeArguments(c.arguments) })}</tool_call>`,
  );
  return message.content + calls.join("");
}
