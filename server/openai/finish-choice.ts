import type { GenerateResult } from "../engines/engine.ts";
import { canonicalText } from "../tokenizers/canonical-text.ts";
import type { Tokenizer } from "../tokenizers/tokenizer.ts";
import type { CompletionChoice, FinishReason } from "./completion.ts";
import { cutAtStop } from "./cut-at-stop.ts";
import type { GenerationRequest } from "./generation-request.ts";
import type { ResponseToolCall, TokenLogprob } from "./schemas.ts";
import { splitThink } from "./split-text.ts";
import { newToolCallId } from "./tool-call-id.ts";

/** One generated choice: as the client sees it, and as the tracker records it. */
export interface ChoiceOutput {
  choice: CompletionChoice;
  outputIds: number[];
  logprobs: number[];
  outputText: string;
  finishReason: FinishReason;
  version: number;
}

function tokenLogprobs(
  tokenizer: Tokenizer,
  ids: readonly number[],
  logprobs: readonly number[],
  top: ReadonlyArray<ReadonlyArray<{ id: number; logprob: number }>> | undefined,
): TokenLogprob[] {
  const token = (id: number) => tokenizer.decode([id]);
  const bytes = (id: number, token: string) => tokenizer.tokenBytes?.(id) ?? [...Buffer.from(token, "utf8")];
  const entry = (id: number, logprob: number) => {
    const t = token(id);
    return { token: t, logprob, bytes: bytes(id, t) };
  };
  // one literal per token, not `{ ...entry(id), top_logprobs }`: a spread followed by a property took V8's slow path (microseconds a token)
  return ids.map((id, i) => {
    const t = token(id);
    return { token: t, logprob: logprobs[i] ?? 0, bytes: bytes(id, t), top_logprobs: (top?.[i] ?? []).map((a) => entry(a.id, a.logprob)) };
  });
}

/** A tool call a stream began: its `<tool_call>` block (from 0) and the id it was given. */
export interface StreamedToolCall {
  block: number;
  id: string;
}

/** Cuts a generation at its stop string, splits off `<think>`, parses tool calls (a call the stream began keeps its id). */
export function finishChoice(
  tokenizer: Tokenizer,
  request: GenerationRequest,
  result: GenerateResult,
  index: number,
  toolSyntax: boolean,
  streamed: readonly StreamedToolCall[] = [],
): ChoiceOutput {
  let outputIds = result.outputIds;
  let logprobs = result.logprobs;
  let finishReason: FinishReason = result.finishReason;
  const endsWithStopId = outputIds.length > 0 && tokenizer.stopIds.includes(outputIds[outputIds.length - 1]!);
  let textIds = endsWithStopId ? outputIds.slice(0, -1) : outputIds;
  let text = tokenizer.decode(textIds);
  const cut = request.stop.length > 0 ? cutAtStop(textIds, tokenizer.decode, request.stop) : null;
  if (cut) {
    outputIds = textIds.slice(0, cut.keep);
    logprobs = logprobs.slice(0, cut.keep);
    textIds = outputIds;
    text = cut.text;
    finishReason = "stop";
  }
  const { reasoning, rest } = splitThink(text);
  const parsed = toolSyntax ? tokenizer.parseAssistant(rest) : { content: rest, toolCalls: [] };
  const calls = request.parallelToolCalls ? parsed.toolCalls : parsed.toolCalls.slice(0, 1);
  const toolCalls: ResponseToolCall[] = calls.map((c) => ({
    id: streamed.find((s) => s.block === c.block)?.id ?? newToolCallId(),
    type: "function",
    function: { name: c.name, arguments: c.arguments },
  }));
  const content = toolSyntax ? parsed.content.trim() : parsed.content;
  const outputText =
    toolCalls.length === 0 ? content : canonicalText({ content, toolCalls: toolCalls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })) });
  const reported: FinishReason = toolCalls.length > 0 ? "tool_calls" : finishReason;
  const topLogprobs = request.logprobs && request.topLogprobs > 0 ? result.topLogprobs : undefined;
  return {
    outputIds,
    logprobs,
    outputText,
    finishReason: reported,
    version: result.version,
    choice: {
      index,
      content: toolCalls.length > 0 && content.length === 0 ? null : content,
      reasoning,
      toolCalls,
      finishReason: reported,
      logprobs: request.logprobs ? tokenLogprobs(tokenizer, textIds, logprobs, topLogprobs) : null,
    },
  };
}
