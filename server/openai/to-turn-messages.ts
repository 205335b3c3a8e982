import type { ChatTurnMessage, ToolDefinition } from "../tokenizers/tokenizer.ts";
import type { ChatCompletionRequest, ChatMessage } from "./schemas.ts";

function joinContent(content: ChatMessage["content"] | null | undefined): string {
  if (content === null || content === undefined) return "";
  return typeof content === "string" ? content : content.map((p) => p.text).join("");
}

/** OpenAI messages -> the tokenizer's messages (`developer` is a system message). */
export function toTurnMessages(messages: readonly ChatMessage[]): ChatTurnMessage[] {
  return messages.map((m): ChatTurnMessage => {
    const out: ChatTurnMessage = { role: m.role === "developer" ? "system" : m.role, content: joinContent(m.content) };
    if (m.role === "assistant" && m.tool_calls && m.tool_calls.length > 0) {
      out.toolCalls = m.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
    }
    if (m.role === "tool") out.toolCallId = m.tool_call_id;
    if (m.role !== "tool" && m.name !== undefined) out.name = m.name;
    return out;
  });
}

export function toToolDefinitions(tools: ChatCompletionRequest["tools"]): ToolDefinition[] {
  return (tools ?? []).map((t) => {
    const d: ToolDefinition = { name: t.function.name };
    if (t.function.description !== undefined) d.description = t.function.description;
    if (t.function.parameters !== undefined) d.parameters = t.function.parameters;
    return d;
  });
}
