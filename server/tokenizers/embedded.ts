import { canonicalText } from "./canonical-text.ts";
import { parseToolCalls } from "./parse-tool-calls.ts";
import { spliceGeneration } from "./splice.ts";
import type { ChatTurnMessage, PromptSegment, RenderedPrompt, RenderOptions, Tokenizer, ToolDefinition } from "./tokenizer.ts";

const SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"] as const;
const CHARS = ["\n", ...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))];
/** Characters outside printable ASCII and newline encode as this one (the vocabulary stays ~100). */
const REPLACEMENT = "?";

const PIECES: readonly string[] = [...SPECIALS, ...CHARS];
const CHAR_ID = new Map(CHARS.map((c, i) => [c, SPECIALS.length + i]));
const SPECIAL_RE = new RegExp(SPECIALS.map((s) => s.replace(/[|<>/]/g, (m) => `\\${m}`)).join("|"), "g");

export const EMBEDDED_IDS = { endOfText: 0, imStart: 1, imEnd: 2, toolCallStart: 3, toolCallEnd: 4 } as const;

/** Text as text: a control-token string in it is spelled out character by character. */
function encodePlain(text: string, out: number[] = []): number[] {
  for (const ch of text) out.push(CHAR_ID.get(ch) ?? CHAR_ID.get(REPLACEMENT)!);
  return out;
}

/** Template or model text: control-token strings become their ids. */
function encode(text: string): number[] {
  const out: number[] = [];
  let last = 0;
  for (const m of text.matchAll(SPECIAL_RE)) {
    encodePlain(text.slice(last, m.index), out);
    out.push(SPECIALS.indexOf(m[0] as (typeof SPECIALS)[number]));
    last = m.index + m[0].length;
  }
  encodePlain(text.slice(last), out);
  return out;
}

function decode(ids: readonly number[]): string {
  let s = "";
  for (const id of ids) s += PIECES[id] ?? "";
  return s;
}

function parseOrRaw(args: string): unknown {
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return args;
  }
}

const TOOLS_HINT = encode('\nCall a tool as <tool_call>{"name": ..., "arguments": ...}</tool_call>');

function toolsBlockIds(tools: readonly ToolDefinition[]): number[] {
  return [...encodePlain(`# Tools\n${tools.map((t) => JSON.stringify(t)).join("\n")}`), ...TOOLS_HINT];
}

function messageIds(message: ChatTurnMessage, toolsBlock: number[] | null): number[] {
  const out: number[] = [EMBEDDED_IDS.imStart];
  encodePlain(`${message.role}\n`, out);
  encodePlain(message.content, out);
  if (message.role === "assistant") {
    for (const c of message.toolCalls ?? []) {
      out.push(EMBEDDED_IDS.toolCallStart);
      encodePlain(JSON.stringify({ name: c.name, arguments: parseOrRaw(c.arguments) }), out);
      out.push(EMBEDDED_IDS.toolCallEnd);
    }
  }
  if (toolsBlock !== null) {
    if (out.length > 1 + message.role.length + 1) encodePlain("\n\n", out);
    out.push(...toolsBlock);
  }
  out.push(EMBEDDED_IDS.imEnd);
  encodePlain("\n", out);
  return out;
}

const HEADER_IDS = encode("<|im_start|>assistant\n");
const END_OF_TURN = { endId: EMBEDDED_IDS.imEnd, afterEndIds: encode("\n") };

function renderChat(messages: readonly ChatTurnMessage[], options?: RenderOptions): RenderedPrompt {
  const tools = options?.tools ?? [];
  const segments: PromptSegment[] = [];
  const toolsBlock = tools.length > 0 ? toolsBlockIds(tools) : null;
  if (toolsBlock !== null && messages[0]?.role !== "system") {
    const ids = [EMBEDDED_IDS.imStart, ...encodePlain("system\n"), ...toolsBlock, EMBEDDED_IDS.imEnd, ...encodePlain("\n")];
    segments.push({ role: "system", text: decode(toolsBlock), ids });
  }
  messages.forEach((m, i) => {
    const spliced = spliceGeneration(m, options?.generated, END_OF_TURN);
    const ids = spliced ?? messageIds(m, i === 0 && m.role === "system" ? toolsBlock : null);
    segments.push({ role: m.role, text: canonicalText(m), ids });
  });
  return { segments, headerIds: [...HEADER_IDS] };
}

/** The embedded model's character-level tokenizer with a ChatML template (Qwen's layout, ~100 ids). */
export function createEmbeddedTokenizer(): Tokenizer {
  return {
    name: "embedded",
    vocabSize: PIECES.length,
    stopIds: [EMBEDDED_IDS.imEnd, EMBEDDED_IDS.endOfText],
    encode,
    decode,
    renderChat,
    parseAssistant: parseToolCalls,
  };
}
