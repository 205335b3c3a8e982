import { randomUUID } from "node:crypto";
import { argumentsLeft, type Completion, type CompletionChoice, type CompletionSink } from "./completion.ts";
import type { ResponseInputItem, ResponsesRequest, TokenLogprob } from "./schemas.ts";
import type { SseWriter } from "./sse-writer.ts";

const newId = (prefix: string) => `${prefix}_${randomUUID().replace(/-/g, "")}`;

export type OutputItem =
  | { type: "reasoning"; id: string; summary: Array<{ type: "summary_text"; text: string }> }
  | {
      type: "message";
      id: string;
      status: "completed" | "in_progress" | "incomplete";
      role: "assistant";
      content: Array<{ type: "output_text"; text: string; annotations: []; logprobs: TokenLogprob[] }>;
    }
  | { type: "function_call"; id: string; call_id: string; name: string; arguments: string; status: "completed" | "in_progress" };

/** Item ids are fixed before streaming starts, so the streamed and the final items agree. */
export interface ResponseIds {
  response: string;
  reasoning: string;
  message: string;
}

export function newResponseIds(): ResponseIds {
  return { response: newId("resp"), reasoning: newId("rs"), message: newId("msg") };
}

/** A function call item's id, from its call's id (a streamed call's item gets it when the call begins). */
const functionCallItemId = (callId: string): string => `fc_${callId.replace(/^call_/, "")}`;

/** A choice as Responses output items: reasoning, then the message, then one item per function call. */
export function toOutputItems(ch: CompletionChoice, ids: ResponseIds): OutputItem[] {
  const items: OutputItem[] = [];
  if (ch.reasoning !== null) items.push({ type: "reasoning", id: ids.reasoning, summary: [{ type: "summary_text", text: ch.reasoning }] });
  if ((ch.content !== null && ch.content.length > 0) || ch.toolCalls.length === 0) {
    items.push({
      type: "message",
      id: ids.message,
      // cut at max_output_tokens: the message is incomplete, as the response is
      status: ch.finishReason === "length" ? "incomplete" : "completed",
      role: "assistant",
      content: [{ type: "output_text", text: ch.content ?? "", annotations: [], logprobs: ch.logprobs ?? [] }],
    });
  }
  for (const c of ch.toolCalls) {
    items.push({ type: "function_call", id: functionCallItemId(c.id), call_id: c.id, name: c.function.name, arguments: c.function.arguments, status: "completed" });
  }
  return items;
}

/** An output item as the input item a later request may send back (or refer to by id). */
export function toInputItem(item: OutputItem): ResponseInputItem {
  if (item.type === "reasoning") return { type: "reasoning", id: item.id, summary: item.summary };
  if (item.type === "message") return { type: "message", role: "assistant", content: item.content[0]?.text ?? "", id: item.id };
  return { type: "function_call", call_id: item.call_id, name: item.name, arguments: item.arguments, id: item.id };
}

export function toResponseObject(
  body: ResponsesRequest,
  meta: { id: string; created: number; model: string },
  done: { completion: Completion; output: OutputItem[] } | null,
): Record<string, unknown> {
  const finish = done?.completion.choices[0]?.finishReason;
  const usage = done?.completion.usage;
  return {
    id: meta.id,
    object: "response",
    created_at: meta.created,
    status: done === null ? "in_progress" : finish === "length" ? "incomplete" : "completed",
    error: null,
    incomplete_details: finish === "length" ? { reason: "max_output_tokens" } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: meta.model,
    output: done?.output ?? [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    store: body.store ?? true,
    temperature: body.temperature ?? null,
    text: { format: body.text?.format ?? { type: "text" } },
    tool_choice: body.tool_choice ?? "auto",
    tools: body.tools ?? [],
    top_p: body.top_p ?? null,
    truncation: "disabled",
    usage: usage
      ? {
          input_tokens: usage.prompt_tokens,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: usage.completion_tokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: usage.total_tokens,
        }
      : null,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  };
}

/**
 * Streams a response as the Responses API's typed events while it is made: `response.created`, the
 * reasoning, message and function-call items with their deltas as they come, the rest of each item at the
 * end, then `response.completed` (or `response.incomplete`). The final `output` lists the items in the
 * order the stream numbered them.
 */
export function createResponseStream(
  sse: SseWriter,
  body: ResponsesRequest,
  ids: ResponseIds,
): CompletionSink & { finish(c: Completion, output: OutputItem[]): void } {
  let seq = 0;
  let meta = { id: ids.response, created: 0, model: "" };
  const emit = (type: string, fields: Record<string, unknown>) => sse.send({ type, sequence_number: seq++, ...fields }, type);
  /** Each item's output_index, by item id, in the order items were added. */
  const indexOf = new Map<string, number>();
  const add = (id: string) => {
    indexOf.set(id, indexOf.size);
    return indexOf.size - 1;
  };
  let reasoning: { index: number; text: string; closed: boolean } | null = null;
  let message: { index: number; text: string } | null = null;
  /** Streamed function calls by position: their item id, output_index and the arguments sent. */
  const calls: Array<{ id: string; index: number; sent: string }> = [];
  const closeReasoning = () => {
    if (!reasoning || reasoning.closed) return;
    const r = reasoning;
    r.closed = true;
    const part = { type: "summary_text", text: r.text };
    emit("response.reasoning_summary_text.done", { item_id: ids.reasoning, output_index: r.index, summary_index: 0, text: r.text });
    emit("response.reasoning_summary_part.done", { item_id: ids.reasoning, output_index: r.index, summary_index: 0, part });
    emit("response.output_item.done", { output_index: r.index, item: { type: "reasoning", id: ids.reasoning, summary: [part] } });
  };
  const openMessage = () => {
    if (message) return message;
    closeReasoning();
    message = { index: add(ids.message), text: "" };
    emit("response.output_item.added", { output_index: message.index, item: { type: "message", id: ids.message, status: "in_progress", role: "assistant", content: [] } });
    emit("response.content_part.added", { item_id: ids.message, output_index: message.index, content_index: 0, part: { type: "output_text", text: "", annotations: [], logprobs: [] } });
    return message;
  };
  const argumentsDelta = (call: { id: string; index: number; sent: string }, delta: string) => {
    call.sent += delta;
    emit("response.function_call_arguments.delta", { item_id: call.id, output_index: call.index, delta });
  };
  return {
    start(m) {
      meta = { id: ids.response, created: m.created, model: m.model };
      const response = toResponseObject(body, meta, null);
      emit("response.created", { response });
      emit("response.in_progress", { response });
    },
    reasoning(_i, delta) {
      if (!reasoning) {
        reasoning = { index: add(ids.reasoning), text: "", closed: false };
        emit("response.output_item.added", { output_index: reasoning.index, item: { type: "reasoning", id: ids.reasoning, summary: [] } });
        emit("response.reasoning_summary_part.added", { item_id: ids.reasoning, output_index: reasoning.index, summary_index: 0, part: { type: "summary_text", text: "" } });
      }
      reasoning.text += delta;
      emit("response.reasoning_summary_text.delta", { item_id: ids.reasoning, output_index: reasoning.index, summary_index: 0, delta });
    },
    content(_i, delta) {
      const m = openMessage();
      m.text += delta;
      emit("response.output_text.delta", { item_id: ids.message, output_index: m.index, content_index: 0, delta, logprobs: [] });
    },
    toolCallStart(_i, position, callId, name) {
      closeReasoning();
      const id = functionCallItemId(callId);
      calls[position] = { id, index: add(id), sent: "" };
      emit("response.output_item.added", {
        output_index: calls[position].index,
        item: { type: "function_call", id, call_id: callId, name, arguments: "", status: "in_progress" },
      });
    },
    toolCallArguments(_i, position, delta) {
      argumentsDelta(calls[position]!, delta);
    },
    finish(c, output) {
      const messageItem = output.find((o) => o.type === "message");
      closeReasoning();
      if (messageItem) {
        const m = openMessage();
        const part = messageItem.content[0]!;
        emit("response.output_text.done", { item_id: ids.message, output_index: m.index, content_index: 0, text: part.text, logprobs: part.logprobs });
        emit("response.content_part.done", { item_id: ids.message, output_index: m.index, content_index: 0, part });
        emit("response.output_item.done", { output_index: m.index, item: messageItem });
      }
      for (const item of output) {
        if (item.type !== "function_call") continue;
        let call = calls.find((s) => s.id === item.id);
        if (!call) {
          call = { id: item.id, index: add(item.id), sent: "" };
          emit("response.output_item.added", { output_index: call.index, item: { ...item, arguments: "", status: "in_progress" } });
        }
        const left = argumentsLeft(item.arguments, call.sent);
        if (left !== "") argumentsDelta(call, left);
        emit("response.function_call_arguments.done", { item_id: item.id, output_index: call.index, name: item.name, arguments: item.arguments });
        emit("response.output_item.done", { output_index: call.index, item });
      }
      output.sort((a, b) => (indexOf.get(a.id) ?? indexOf.size) - (indexOf.get(b.id) ?? indexOf.size));
      const response = toResponseObject(body, meta, { completion: c, output });
      emit(response.status === "incomplete" ? "response.incomplete" : "response.completed", { response });
      sse.end();
    },
  };
}
