import type { Completion } from "./completion.ts";
import type { ChatCompletionResponse } from "./schemas.ts";

export function toResponse(c: Completion): ChatCompletionResponse {
  const message: ChatCompletionResponse["choices"][number]["message"] = { role: "assistant", content: c.content, refusal: null };
  if (c.toolCalls.length > 0) message.tool_calls = c.toolCalls;
  return {
    id: c.id,
    object: "chat.completion",
    created: c.created,
    model: c.model,
    system_fingerprint: `agentjet-v${c.version}`,
    choices: [{ index: 0, message, logprobs: c.logprobs ? { content: c.logprobs, refusal: null } : null, finish_reason: c.finishReason }],
    usage: c.usage,
  };
}

/** The SSE body of a streamed completion: role, content, tool calls, finish, optional usage, `[DONE]`. */
export function toSseBody(c: Completion, includeUsage: boolean): string {
  const head = { id: c.id, object: "chat.completion.chunk", created: c.created, model: c.model, system_fingerprint: `agentjet-v${c.version}` };
  const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({
      ...head,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: null, ...extra }],
      ...(includeUsage ? { usage: null } : {}),
    })}\n\n`;
  const parts = [chunk({ role: "assistant", content: "" })];
  if (c.content !== null && c.content.length > 0) {
    parts.push(chunk({ content: c.content }, c.logprobs ? { logprobs: { content: c.logprobs, refusal: null } } : {}));
  }
  if (c.toolCalls.length > 0) {
    parts.push(chunk({ tool_calls: c.toolCalls.map((t, index) => ({ index, ...t })) }));
  }
  parts.push(chunk({}, { finish_reason: c.finishReason }));
  if (includeUsage) parts.push(`data: ${JSON.stringify({ ...head, choices: [], usage: c.usage })}\n\n`);
  parts.push("data: [DONE]\n\n");
  return parts.join("");
}
