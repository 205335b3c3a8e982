import { readToolCallBlock } from "./tool-call-block.ts";

const TOOL_CALL = /<tool_call>([\s\S]*?)<\/tool_call>/g;

/** A tool call of a generation; `block`: which of its `<tool_call>` blocks (from 0, blocks that are no call counted too). */
export interface ParsedToolCall {
  name: string;
  arguments: string;
  block: number;
}

/**
 * Splits a generation into content and `<tool_call>{"name":..,"arguments":..}</tool_call>` blocks (the
 * Qwen/Hermes syntax both tokenizers use). A block that is not valid JSON with a string `name` stays text.
 * Arguments that are an object or an array are the model's own text of them (what a stream sends as it is
 * written); other arguments are their JSON (a string, its text; none, `{}`).
 */
export function parseToolCalls(text: string): { content: string; toolCalls: ParsedToolCall[] } {
  const toolCalls: ParsedToolCall[] = [];
  let block = -1;
  const content = text.replace(TOOL_CALL, (whole, inner: string) => {
    block++;
    try {
      const parsed = JSON.parse(inner) as unknown;
      if (typeof parsed !== "object" || parsed === null) return whole;
      const { name, arguments: args } = parsed as { name?: unknown; arguments?: unknown };
      if (typeof name !== "string" || name.length === 0) return whole;
      toolCalls.push({ name, arguments: argumentsText(inner, args), block });
      return "";
    } catch {
      return whole;
    }
  });
  return { content: toolCalls.length > 0 ? content.trim() : content, toolCalls };
}

function argumentsText(inner: string, args: unknown): string {
  if (typeof args === "string") return args;
  const read = readToolCallBlock(inner);
  if (read.args?.kind === "container" && read.args.end !== null && !read.broken) return inner.slice(read.args.start, read.args.end);
  return JSON.stringify(args ?? {});
}
