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
/** The id of each UTF-16 code unit below 128 that is one of CHARS, else -1 (the hot loop reads this, not the maps). */
const ASCII_ID = Int16Array.from({ length: 128 }, (_, c) => CHAR_ID.get(String.fromCharCode(c)) ?? -1);
const SPECIAL_RE = new RegExp(SPECIALS.map((s) => s.replace(/[|<>/]/g, (m) => `\\${m}`)).join("|"), "g");
const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** `firstByte`: the first byte id; every id below it decodes to whole characters on its own. */
export const EMBEDDED_IDS = { endOfText: 0, imStart: 1, imEnd: 2, toolCallStart: 3, toolCallEnd: 4, firstByte: 101 } as const;
if (SPECIALS.length + CHARS.length !== EMBEDDED_IDS.firstByte) throw new Error("embedded tokenizer: firstByte is out of date");

/** Text as text: a control-token string in it is spelled out character by character. */
function encodePlain(text: string, out: number[] = []): number[] {
  let i = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    const id = code < 128 ? ASCII_ID[code]! : -1;
    if (id >= 0) {
      out.push(id);
      i++;
      continue;
    }
    // one character (a surrogate pair is one) as its UTF-8 bytes
    const ch = String.fromCodePoint(text.codePointAt(i)!);
    for (const b of utf8.encode(ch)) out.push(BYTE_ID.get(b)!);
    i += ch.length;
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

/** Ids whose bytes are ASCII (all below `firstByte`) are decoded through this buffer, grown as needed. */
let asciiScratch = Buffer.allocUnsafe(1024);
const SCRATCH_MAX = 1 << 16;

/** Bytes that are not valid UTF-8 (a generation that stops inside a character) read as U+FFFD. */
function decode(ids: PromptSegment["ids"]): string {
  let n = 0;
  let ascii = true;
  for (let i = 0; i < ids.length; i++) {
    const b = ID_BYTES[ids[i]!];
    if (b === undefined) continue;
    n += b.length;
    if (ids[i]! >= EMBEDDED_IDS.firstByte) ascii = false;
  }
  // ASCII bytes are their own characters: one latin1 read, no UTF-8 decoding
  if (ascii) {
    // a long text gets a buffer of its own (the shared one is not grown past a generation's size)
    if (asciiScratch.length < n && n <= SCRATCH_MAX) asciiScratch = Buffer.allocUnsafe(Math.min(SCRATCH_MAX, Math.max(n, asciiScratch.length * 2)));
    const out = n <= asciiScratch.length ? asciiScratch : Buffer.allocUnsafe(n);
    let at = 0;
    for (let i = 0; i < ids.length; i++) {
      const b = ID_BYTES[ids[i]!];
      if (b === undefined) continue;
      if (b.length === 1) out[at++] = b[0]!;
      else for (let k = 0; k < b.length; k++) out[at++] = b[k]!;
    }
    return out.toString("latin1", 0, at);
  }
  const bytes = new Uint8Array(n);
  let at = 0;
  for (const id of ids) {
    const b = ID_BYTES[id];
    if (b === undefined) continue;
    if (b.length === 1) bytes[at] = b[0]!;
    else bytes.set(b, at);
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

/** Messages longer than this are not cached (they would be hashed on every lookup, and held). */
const CACHED_CHARS = 16_384;
/** Segments cached at most; a full cache starts over. */
const CACHED_SEGMENTS = 4096;

/**
 * Rendered messages without tool calls, by role and content: an episode's call k repeats calls 1..k-1's
 * messages (and an environment's system prompt repeats across episodes), so each renders once. A hit is
 * the same segment object, ids included: prompts share them (segments are never written to).
 */
class MessageSegments {
  private readonly byRole = new Map<string, Map<string, PromptSegment>>();
  private size = 0;

  get(role: string, content: string): PromptSegment | undefined {
    return this.byRole.get(role)?.get(content);
  }

  put(segment: PromptSegment): void {
    if (this.size >= CACHED_SEGMENTS) {
      this.byRole.clear();
      this.size = 0;
    }
    let contents = this.byRole.get(segment.role);
    if (contents === undefined) this.byRole.set(segment.role, (contents = new Map()));
    contents.set(segment.text, segment);
    this.size++;
  }
}

function renderChat(messages: readonly ChatTurnMessage[], options?: RenderOptions, encoded?: Encoded, cache?: MessageSegments): RenderedPrompt {
  const tools = options?.tools ?? [];
  const segments: PromptSegment[] = [];
  const toolsBlock = tools.length > 0 ? toolsBlockIds(tools) : null;
  if (toolsBlock !== null && messages[0]?.role !== "system") {
    const ids = [EMBEDDED_IDS.imStart, ...encodePlain("system\n"), ...toolsBlock, EMBEDDED_IDS.imEnd, ...encodePlain("\n")];
    segments.push({ role: "system", text: decode(toolsBlock), ids });
  }
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const spliced = spliceGeneration(m, options?.generated, END_OF_TURN);
    if (spliced !== null) {
      segments.push({ role: m.role, text: canonicalText(m), ids: spliced });
      continue;
    }
    const block = i === 0 && m.role === "system" ? toolsBlock : null;
    // a message alone (no tool calls, no tools block) renders from its role and content
    const cacheable = cache !== undefined && block === null && (m.toolCalls === undefined || m.toolCalls.length === 0) && m.content.length <= CACHED_CHARS;
    let segment = cacheable ? cache.get(m.role, m.content) : undefined;
    if (segment === undefined) {
      segment = { role: m.role, text: canonicalText(m), ids: messageIds(m, block, encoded) };
      if (cacheable) cache.put(segment);
    }
    segments.push(segment);
  }
  // every prompt shares the header's ids (they are never written to)
  return { segments, headerIds: HEADER_IDS };
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
async function renderChatAsync(messages: readonly ChatTurnMessage[], options: RenderOptions | undefined, cache: MessageSegments): Promise<RenderedPrompt> {
  let encoded: Map<string, number[]> | undefined;
  for (const m of messages) {
    if (m.content.length <= SLICE_CHARS || encoded?.has(m.content)) continue;
    const out: number[] = [];
    await encodePlainSliced(m.content, out);
    (encoded ??= new Map()).set(m.content, out);
  }
  return renderChat(messages, options, encoded, cache);
}

/**
 * The embedded model's character-level tokenizer with a ChatML template (Qwen's layout): special tokens,
 * newline and printable ASCII as characters, every other byte as a byte (261 ids). Each tokenizer caches
 * its rendered messages.
 */
export function createEmbeddedTokenizer(): Tokenizer {
  const cache = new MessageSegments();
  return {
    name: "embedded",
    vocabSize: ID_BYTES.length,
    stopIds: [EMBEDDED_IDS.imEnd, EMBEDDED_IDS.endOfText],
    encode,
    encodeAsync,
    decode,
    tokenBytes: (id) => [...(ID_BYTES[id] ?? [])],
    renderChat: (messages, options) => renderChat(messages, options, undefined, cache),
    renderChatAsync: (messages, options) => renderChatAsync(messages, options, cache),
    parseAssistant: parseToolCalls,
  };
}
