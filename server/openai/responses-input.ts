import type { ChatTurnMessage, ToolDefinition } from "../tokenizers/tokenizer.ts";
import { HttpError } from "./errors.ts";
import type { GenerationRequest, ToolChoice } from "./generation-request.ts";
import { jsonSchemaFormat } from "./to-turn-messages.ts";
import type { ResponseInputItem, ResponsesRequest } from "./schemas.ts";

function partsText(content: string | ReadonlyArray<{ type: string; text?: string; refusal?: string }>): string {
  return typeof content === "string" ? content : content.map((p) => p.text ?? p.refusal ?? "").join("");
}

/**
 * Responses input items -> chat turns: messages map by role (`developer` is system), a function call
 * joins the assistant turn before it (text and calls of one generation are one turn), a call's output is
 * a tool message. Reasoning items are dropped (the template drops past thinking too).
 */
export function toConversation(
  items: readonly ResponseInputItem[],
  resolve: (id: string) => ResponseInputItem | undefined,
): ChatTurnMessage[] {
  const out: ChatTurnMessage[] = [];
  items.forEach((raw, i) => {
    const item = raw.type === "item_reference" ? resolve(raw.id) : raw;
    if (!item) {
      throw new HttpError(400, "AJ_ERR_INVALID_REQUEST", `input.${i}.id: no item '${(raw as { id: string }).id}' in this episode`, { param: `input.${i}.id` });
    }
    switch (item.type) {
      case "message":
        out.push({ role: item.role === "developer" ? "system" : item.role, content: partsText(item.content) });
        return;
      case "function_call": {
        const call = { id: item.call_id, name: item.name, arguments: item.arguments };
        const last = out[out.length - 1];
        if (last?.role === "assistant") (last.toolCalls ??= []).push(call);
        else out.push({ role: "assistant", content: "", toolCalls: [call] });
        return;
      }
      case "function_call_output":
        out.push({ role: "tool", content: partsText(item.output), toolCallId: item.call_id });
        return;
      case "reasoning":
      case "item_reference":
        return;
    }
  });
  return out;
}

export function fromResponsesRequest(body: ResponsesRequest, messages: ChatTurnMessage[]): GenerationRequest {
  const tools: ToolDefinition[] = (body.tools ?? []).map((t) => {
    const d: ToolDefinition = { name: t.name };
    if (t.description !== undefined && t.description !== null) d.description = t.description;
    if (t.parameters !== undefined && t.parameters !== null) d.parameters = t.parameters;
    return d;
  });
  const choice = body.tool_choice;
  const toolChoice: ToolChoice = choice === undefined || choice === null ? "auto" : typeof choice === "string" ? choice : { name: choice.name };
  const format = body.text?.format;
  const wantLogprobs = (body.include ?? []).includes("message.output_text.logprobs") || (body.top_logprobs ?? 0) > 0;
  return {
    messages: body.instructions ? [{ role: "system", content: body.instructions }, ...messages] : messages,
    tools,
    toolChoice,
    parallelToolCalls: body.parallel_tool_calls ?? true,
    maxTokens: body.max_output_tokens ?? undefined,
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    stop: [],
    seed: undefined,
    logprobs: wantLogprobs,
    topLogprobs: body.top_logprobs ?? 0,
    n: 1,
    responseFormat:
      !format || format.type === "text"
        ? { type: "text" }
        : format.type === "json_object"
          ? { type: "json_object" }
          : jsonSchemaFormat(format.name, format.schema, format.description, format.strict),
    templateKwargs: body.chat_template_kwargs ?? {},
    params: { toolChoice: "tool_choice", responseFormat: "text.format" },
  };
}
