import type { ChatTurnMessage, ToolDefinition } from "../tokenizers/tokenizer.ts";
import { HttpError } from "./errors.ts";
import type { GenerationRequest, ResponseFormat, ToolChoice } from "./generation-request.ts";
import { hasBias } from "./sampling-reshapes.ts";
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

/** The stop strings, empty ones left out. */
function stopList(stop: string | string[] | null | undefined): string[] {
  if (stop === undefined || stop === null) return [];
  return (typeof stop === "string" ? [stop] : stop).filter((s) => s.length > 0);
}

const CHAT_PARAMS = { toolChoice: "tool_choice", responseFormat: "response_format" } as const;

export function toResponseFormat(f: ChatCompletionRequest["response_format"]): ResponseFormat {
  if (!f || f.type === "text") return { type: "text" };
  if (f.type === "json_object") return { type: "json_object" };
  return jsonSchemaFormat(f.json_schema.name, f.json_schema.schema ?? {}, f.json_schema.description, f.json_schema.strict);
}

/** A `json_schema` response format, with the request's description and `strict` when it gave them. */
export function jsonSchemaFormat(name: string, schema: Record<string, unknown>, description: string | null | undefined, strict: boolean | null | undefined): ResponseFormat {
  const f: ResponseFormat = { type: "json_schema", name, schema };
  if (typeof description === "string") f.description = description;
  if (typeof strict === "boolean") f.strict = strict;
  return f;
}

/** A validated chat completion request in the server's terms. */
export function fromChatRequest(body: ChatCompletionRequest): GenerationRequest {
  if (body.top_logprobs !== undefined && body.top_logprobs !== null && body.logprobs !== true) {
    throw new HttpError(400, "AJ_ERR_INVALID_REQUEST", "top_logprobs: requires logprobs: true", { param: "top_logprobs" });
  }
  const choice = body.tool_choice;
  const toolChoice: ToolChoice = choice === undefined || choice === null ? "auto" : typeof choice === "string" ? choice : { name: choice.function.name };
  return {
    messages: toTurnMessages(body.messages),
    tools: toToolDefinitions(body.tools),
    toolChoice,
    parallelToolCalls: body.parallel_tool_calls ?? true,
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    stop: stopList(body.stop),
    seed: body.seed ?? undefined,
    logprobs: body.logprobs === true,
    topLogprobs: body.top_logprobs ?? 0,
    n: body.n ?? 1,
    responseFormat: toResponseFormat(body.response_format),
    penalties: { frequency: body.frequency_penalty ?? 0, presence: body.presence_penalty ?? 0 },
    logitBias: hasBias(body.logit_bias),
    templateKwargs: body.chat_template_kwargs ?? {},
    params: CHAT_PARAMS,
  };
}
