import type { ResponseFormat } from "../env/protocol.ts";
import type { AgentAccess } from "./protocol.ts";
import { ChatCompletionError } from "./errors.ts";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/**
 * One chat completion with raw fetch; returns the assistant text. `responseFormat` (an observation's) is
 * sent as OpenAI's `response_format: { type: "json_schema", json_schema: { name, schema, strict: true } }`.
 */
export async function createChatCompletion(
  access: AgentAccess,
  messages: readonly ChatMessage[],
  options: { fetch?: typeof fetch; signal?: AbortSignal; responseFormat?: ResponseFormat } = {},
): Promise<string> {
  const doFetch = options.fetch ?? fetch;
  const format = options.responseFormat;
  const request = format
    ? { model: access.model, messages, response_format: { type: "json_schema", json_schema: { name: format.name, schema: format.schema, strict: true } } }
    : { model: access.model, messages };
  const res = await doFetch(`${access.baseUrl.replace(/\/+$/, "")}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${access.apiKey}` },
    body: JSON.stringify(request),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw new ChatCompletionError(res.status, text);
  const body = JSON.parse(text) as { choices?: Array<{ message?: { content?: string | null } }> };
  return body.choices?.[0]?.message?.content ?? "";
}
