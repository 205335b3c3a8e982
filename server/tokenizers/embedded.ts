import { canonicalText } from "./canonical-text.ts";
import { parseToolCalls } from "./parse-tool-calls.ts";
import { spliceGeneration } from "./splice.ts";
import type { ChatTurnMessage, PromptSegment, RenderedPrompt, RenderOptions, Tokenizer, ToolDefinition } from "./tokenizer.ts";

const SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"] as const;
const CHARS = ["\n", ...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))];
/**
 * Every byte that is not one of CHARS (other control characters and all bytes of multi-byte UTF-8) has an
 * id of its own after the characters, so any text round-trips: a character outside CHARS encodes as its
 * UTF-8 bytes (ids 101..260).
 */
const BYTES = Array.from({ length: 256 }, (_, b) => b).filter((b) => !CHARS.includes(String.fromCharCode(b)));

const CHAR_ID = new Map(CHARS.map((c, i) => [c, SPECIALS.length + i]));
const BYTE_ID = new Map(BYTES.map((b, i) => [b, SPECIALS.length + CHARS.length + i]));
/** Each id's UTF-8 bytes: decoding concatenates them and reads the result as UTF-8. */
const ID_BYTES: readonly Uint8Array[] = [
  ...[...SPECIALS, ...CHARS].map((p) => new TextEncoder().encode(p)),
  ...BYTES.map((b) => Uint8Array.of(b)),
];
const SPECIAL_RE = new RegExp(SPECIALS.map((s) => s.replace(/[|<>/]/g, (m) => `\\${m}`)).join("|"), "g");
const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** `firstByte`: the first byte id; every id below it decodes to whole characters on its own. */
export const EMBEDDED_IDS = { endOfText: 0, imStart: 1, imEnd: 2, toolCallStart: 3, toolCallEnd: 4, firstByte: 101 } as const;
if (SPECIALS.length + CHARS.length !== EMBEDDED_IDS.firstByte) throw new Error("embedded tokenizer: firstByte is out of date");

/** Text as text: a control-token string in it is spelled out character by character. */
function encodePlain(text: string, out: number[] = []): number[] {
  for (const ch of text) {
    const id = CHAR_ID.get(ch);
    if (id !== undefined) out.push(id);
    else for (const b of utf8.encode(ch)) out.push(BYTE_ID.get(b)!);
  }
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

/** Bytes that are not valid UTF-8 (a generation that stops inside a character) read as U+FFFD. */
function decode(ids: readonly number[]): string {
  let n = 0;
  for (const id of ids) n += ID_BYTES[id]?.length ?? 0;
  const bytes = new Uint8Array(n);
  let at = 0;
  for (const id of ids) {
    const b = ID_BYTES[id];
    if (b === undefined) continue;
    bytes.set(b, at);
    at += b.length;
  }
  return utf8Decoder.decode(bytes);
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

/** Text already encoded (a long message's content, made a slice at a time), by the text. */
type Encoded = ReadonlyMap<string, readonly number[]>;

function messageIds(message: ChatTurnMessage, toolsBlock: number[] | null, encoded?: Encoded): number[] {
  const out: number[] = [EMBEDDED_IDS.imStart];
  encodePlain(`${message.role}\n`, out);
  const content = encoded?.get(message.content);
  if (content) for (const id of content) out.push(id);
  else encodePlain(message.content, out);
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

function renderChat(messages: readonly ChatTurnMessage[], options?: RenderOptions, encoded?: Encoded): RenderedPrompt {
  const tools = options?.tools ?? [];
  const segments: PromptSegment[] = [];
  const toolsBlock = tools.length > 0 ? toolsBlockIds(tools) : null;
  if (toolsBlock !== null && messages[0]?.role !== "system") {
    const ids = [EMBEDDED_IDS.imStart, ...encodePlain("system\n"), ...toolsBlock, EMBEDDED_IDS.imEnd, ...encodePlain("\n")];
    segments.push({ role: "system", text: decode(toolsBlock), ids });
  }
  messages.forEach((m, i) => {
    const spliced = spliceGeneration(m, options?.generated, END_OF_TURN);
    const ids = spliced ?? messageIds(m, i === 0 && m.role === "system" ? toolsBlock : null, encoded);
    segments.push({ role: m.role, text: canonicalText(m), ids });
  });
  return { segments, headerIds: [...HEADER_IDS] };
}

/** Characters encoded between two turns of the event loop in `renderChatAsync`. */
const SLICE_CHARS = 1 << 16;

/** `encodePlain` a slice at a time, with the event loop let in between slices. */
async function encodePlainSliced(text: string, out: number[]): Promise<void> {
  let at = 0;
  while (at < text.length) {
    // a slice never ends between the two halves of a surrogate pair
    let end = Math.min(at + SLICE_CHARS, text.length);
    if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1]!)) end++;
    encodePlain(text.slice(at, end), out);
    at = end;
    if (at < text.length) await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

async function encodeAsync(text: string): Promise<number[]> {
  const out: number[] = [];
  let last = 0;
  for (const m of text.matchAll(SPECIAL_RE)) {
    await encodePlainSliced(text.slice(last, m.index), out);
    out.push(SPECIALS.indexOf(m[0] as (typeof SPECIALS)[number]));
    last = m.index + m[0].length;
  }
  await encodePlainSliced(text.slice(last), out);
  return out;
}

/** Long message contents are encoded first, a slice at a time, then the prompt renders as `renderChat` does. */
async function renderChatAsync(messages: readonly ChatTurnMessage[], options?: RenderOptions): Promise<RenderedPrompt> {
  const encoded = new Map<string, number[]>();
  for (const m of messages) {
    if (m.content.length <= SLICE_CHARS || encoded.has(m.content)) continue;
    const out: number[] = [];
    await encodePlainSliced(m.content, out);
    encoded.set(m.content, out);
  }
  return renderChat(messages, options, encoded);
}

/**
 * The embedded model's character-level tokenizer with a ChatML template (Qwen's layout): special tokens,
 * newline and printable ASCII as characters, every other byte as a byte (261 ids).
 */
export function createEmbeddedTokenizer(): Tokenizer {
  return {
    name: "embedded",
    vocabSize: ID_BYTES.length,
    stopIds: [EMBEDDED_IDS.imEnd, EMBEDDED_IDS.endOfText],
    encode,
    encodeAsync,
    decode,
    tokenBytes: (id) => [...(ID_BYTES[id] ?? [])],
    renderChat: (messages, options) => renderChat(messages, options),
    renderChatAsync,
    parseAssistant: parseToolCalls,
  };
}
