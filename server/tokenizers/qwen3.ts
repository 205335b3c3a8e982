import { Template } from "@huggingface/jinja";
import { canonicalText } from "./canonical-text.ts";
import { encodeInWorker, warmEncodePool } from "./encode-pool.ts";
import { parseToolCalls } from "./parse-tool-calls.ts";
import { joinRuns, loadQwen3Text, type Piece } from "./qwen3-text.ts";
import { longTextKey, SegmentCache, type SegmentKey } from "./segment-cache.ts";
import { spliceGeneration } from "./splice.ts";
import type { ChatTurnMessage, PromptSegment, RenderedPrompt, RenderOptions, Tokenizer, ToolDefinition } from "./tokenizer.ts";

/** A piece of a rendered message: template text (control tokens allowed) or text from the message (tokenized as text). */
type Part = { template: string } | { text: string };

const T = (template: string): Part => ({ template });
const X = (text: string): Part => ({ text });

const lstripNl = (s: string) => s.replace(/^\n+/, "");
const rstripNl = (s: string) => s.replace(/\n+$/, "");

/**
 * Qwen3's chat template, message by message. It is the template of the tokenizer's own
 * tokenizer_config.json written out (a test checks the two agree): one message renders without
 * rendering the others, so a prompt costs one pass over its messages, and each part knows whether it
 * is template or message text.
 */
function renderMessage(messages: readonly ChatTurnMessage[], i: number, lastQuery: number): Part[] {
  const m = messages[i]!;
  if (m.role === "user" || m.role === "system") return [T(`<|im_start|>${m.role}\n`), X(m.content), T("<|im_end|>\n")];
  if (m.role === "tool") {
    const parts: Part[] = [];
    if (i === 0 || messages[i - 1]!.role !== "tool") parts.push(T("<|im_start|>user"));
    parts.push(T("\n<tool_response>\n"), X(m.content), T("\n</tool_response>"));
    if (i === messages.length - 1 || messages[i + 1]!.role !== "tool") parts.push(T("<|im_end|>\n"));
    return parts;
  }
  let content = m.content;
  let reasoning = "";
  if (content.includes("</think>")) {
    const pieces = content.split("</think>");
    content = lstripNl(pieces[pieces.length - 1]!);
    const before = rstripNl(pieces[0]!).split("<think>");
    reasoning = lstripNl(before[before.length - 1]!);
  }
  const parts: Part[] = [];
  if (i > lastQuery && (i === messages.length - 1 || reasoning.length > 0)) {
    parts.push(T("<|im_start|>assistant\n<think>\n"), X(rstripNl(lstripNl(reasoning))), T("\n</think>\n\n"), X(lstripNl(content)));
  } else {
    parts.push(T("<|im_start|>assistant\n"), X(content));
  }
  (m.toolCalls ?? []).forEach((c, j) => {
    if ((j === 0 && content.length > 0) || j > 0) parts.push(T("\n"));
    parts.push(T('<tool_call>\n{"name": "'), X(c.name), T('", "arguments": '), X(c.arguments), T("}\n</tool_call>"));
  });
  parts.push(T("<|im_end|>\n"));
  return parts;
}

/** Index of the last real user query (not a tool response passed as a user message). */
function lastQueryIndex(messages: readonly ChatTurnMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "user" && !(m.content.startsWith("<tool_response>") && m.content.endsWith("</tool_response>"))) return i;
  }
  return messages.length - 1;
}

/** Text tokenized between two turns of the event loop in `renderChatAsync`, about. */
const SLICE_CHARS = 2048;
/** New text of a request up to this many characters is tokenized on the event loop, more on the encode thread. */
const INLINE_CHARS = 4096;
/** Message text longer than this is left out of a segment's cache key (and compared on its own). */
const LONG_CHARS = 4096;
/** Set once the encode thread failed to start (warned once; rendering goes on in slices). */
let workerFailed = false;
/** `renderChatAsync` lets the event loop run once it has held it this long. */
const YIELD_AFTER_MS = 2;

/** Lets the event loop run now and then during a long piece of work. */
class Turn {
  private since = performance.now();
  constructor(private readonly budgetMs: number) {}
  async maybeYield(): Promise<void> {
    if (!this.due()) return;
    await this.yieldNow();
  }

  /** Whether the budget is spent (a loop checks this per item and awaits `yieldNow` only then: no promise per item). */
  due(): boolean {
    return performance.now() - this.since >= this.budgetMs;
  }

  /** Lets the event loop run now (between two long pieces of work that must not add up). */
  async yieldNow(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}

const LETTER = /\p{L}/u;
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/**
 * Cuts text into pieces of about `size` characters where Qwen's pre-tokenizer would cut anyway (before a
 * letter or digit that follows a newline, or before a space between two letters), so tokenizing the
 * pieces one by one gives the ids of tokenizing the whole.
 */
export function splitAtWordBoundaries(text: string, size: number): string[] {
  if (text.length <= size) return [text];
  const out: string[] = [];
  let start = 0;
  let i = size;
  while (i < text.length - 1) {
    const prev = text[i - 1]!;
    const cur = text[i]!;
    if ((prev === "\n" && LETTER_OR_DIGIT.test(cur)) || (cur === " " && LETTER.test(prev) && LETTER.test(text[i + 1]!))) {
      out.push(text.slice(start, i));
      start = i;
      i += size;
    } else i++;
  }
  out.push(text.slice(start));
  return out;
}

let cached: Tokenizer | null = null;

/**
 * The Qwen3 tokenizer with its chat template. Each message's segment is what the template adds for it;
 * message text is tokenized as text (a `<|im_end|>` typed by a user or returned by a tool is characters,
 * not a control token); segments are cached, so an episode's later calls tokenize only their new messages.
 */
export function createQwen3Tokenizer(): Tokenizer {
  if (cached) return cached;
  const { hf, config, encodeText, encodePieces } = loadQwen3Text();
  // the encode thread starts with the tokenizer (at server start), not on the first large request
  warmEncodePool();
  const template = new Template(String(config.chat_template));
  const encode = (text: string): number[] => hf.encode(text, { add_special_tokens: false });
  // hf.decode throws on no ids; a reply that is only its end token leaves none
  const decode = (ids: PromptSegment["ids"]): string => (ids.length === 0 ? "" : hf.decode([...ids], { skip_special_tokens: false }));
  const addedIds = new Map(hf.added_tokens.map((t) => [t.content, t.id] as const));
  const ADDED = new RegExp([...addedIds.keys()].map((s) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")).join("|"), "g");
  const imEnd = addedIds.get("<|im_end|>")!;
  const endOfText = addedIds.get("<|endoftext|>")!;
  const endOfTurn = { endId: imEnd, afterEndIds: encode("\n") };
  // the generation prompt, shared by every prompt (ids are never written to)
  const header = encode("<|im_start|>assistant\n");
  const headerNoThinking = encode("<|im_start|>assistant\n<think>\n\n</think>\n\n");
  // each message's ids held once, shared by the prompts that repeat it (segments are never written to); a
  // message tokenized on the encode thread keeps the view of the shared memory its ids came back in
  const segments = new SegmentCache<PromptSegment["ids"]>(4096);

  /**
   * Template text splits at control tokens; message text does not, and runs on into the template text
   * around it (consecutive strings are one run, never concatenated here): text and control-token ids.
   */
  const pieces = (parts: readonly Part[]): Piece[] => {
    const out: Piece[] = [];
    for (const p of parts) {
      if ("text" in p) {
        out.push(p.text);
        continue;
      }
      let last = 0;
      for (const m of p.template.matchAll(ADDED)) {
        out.push(p.template.slice(last, m.index), addedIds.get(m[0])!);
        last = m.index + m[0].length;
      }
      out.push(p.template.slice(last));
    }
    return out;
  };
  const encodeParts = (parts: readonly Part[]): number[] => encodePieces(pieces(parts));
  /** The same ids as `encodeParts`, made a slice at a time with the event loop let in between. */
  const encodePiecesSliced = async (segment: readonly Piece[], turn: Turn): Promise<number[]> => {
    const out: number[] = [];
    for (const piece of joinRuns(segment)) {
      if (typeof piece === "number") {
        out.push(piece);
        continue;
      }
      for (const slice of splitAtWordBoundaries(piece, SLICE_CHARS)) {
        for (const id of encodeText(slice)) out.push(id);
        await turn.maybeYield();
      }
    }
    return out;
  };
  const keyOf = (parts: readonly Part[]): SegmentKey => {
    const long = parts.flatMap((p) => ("text" in p && p.text.length > LONG_CHARS ? [p.text] : []));
    const key = parts.map((p) => ("template" in p ? `\u0002${p.template}` : p.text.length > LONG_CHARS ? `\u0003${longTextKey(p.text)}` : `\u0001${p.text}`)).join("");
    return { key, long };
  };
  const cachedIds = (parts: readonly Part[]): PromptSegment["ids"] => segments.get(keyOf(parts), () => encodeParts(parts));

  /** The tools block (and the first system message, when there is one), rendered by the template itself. */
  const toolsHeaders = new Map<string, string>();
  const toolsBlock = (tools: readonly ToolDefinition[]): string => {
    const key = JSON.stringify(tools);
    let block = toolsHeaders.get(key);
    if (block === undefined) {
      const rendered = template.render({
        messages: [{ role: "user", content: "" }],
        tools: tools.map((t) => ({ type: "function", function: t })),
        add_generation_prompt: false,
        bos_token: "",
        eos_token: "<|im_end|>",
      });
      block = rendered.slice("<|im_start|>system\n".length, rendered.indexOf("<|im_end|>\n") + "<|im_end|>\n".length);
      if (toolsHeaders.size > 256) toolsHeaders.clear();
      toolsHeaders.set(key, block);
    }
    return block;
  };
  /** The tools block is template text except the tool definitions, which come from the request. */
  const toolsParts = (block: string): Part[] => {
    const open = block.indexOf("<tools>") + "<tools>".length;
    const close = block.indexOf("\n</tools>");
    return [T(block.slice(0, open)), X(block.slice(open, close)), T(block.slice(close))];
  };

  /** What each segment is: spliced ids, or parts to tokenize (through the cache). */
  type Planned = { role: PromptSegment["role"]; text: string; ids: number[] } | { role: PromptSegment["role"]; text: string; parts: Part[] };
  /** A prompt's plan, message by message (`plan` runs it in one go, `renderChatAsync` with turns of the event loop between messages). */
  const planner = (messages: readonly ChatTurnMessage[], options?: RenderOptions) => {
    const tools = options?.tools ?? [];
    const thinkingOff = options?.templateKwargs?.enable_thinking === false;
    const headerIds = thinkingOff ? headerNoThinking : header;
    const planned: Planned[] = [];
    const block = tools.length > 0 ? toolsBlock(tools) : null;
    if (block !== null && messages[0]?.role !== "system") {
      planned.push({ role: "system", text: `<|im_start|>system\n${block}`, parts: [T("<|im_start|>system\n"), ...toolsParts(block)] });
    }
    const lastQuery = lastQueryIndex(messages);
    const message = (i: number): void => {
      const m = messages[i]!;
      const spliced = spliceGeneration(m, options?.generated, endOfTurn);
      const text = canonicalText(m);
      if (spliced) planned.push({ role: m.role, text, ids: spliced });
      else if (i === 0 && m.role === "system" && block !== null) planned.push({ role: m.role, text, parts: [T("<|im_start|>system\n"), X(m.content), T("\n\n"), ...toolsParts(block)] });
      else planned.push({ role: m.role, text, parts: renderMessage(messages, i, lastQuery) });
    };
    return { planned, headerIds, message };
  };

  const plan = (messages: readonly ChatTurnMessage[], options?: RenderOptions): { planned: Planned[]; headerIds: number[] } => {
    const { planned, headerIds, message } = planner(messages, options);
    for (let i = 0; i < messages.length; i++) message(i);
    return { planned, headerIds };
  };

  const renderChat = (messages: readonly ChatTurnMessage[], options?: RenderOptions): RenderedPrompt => {
    const { planned, headerIds } = plan(messages, options);
    return { segments: planned.map((p) => ({ role: p.role, text: p.text, ids: "ids" in p ? p.ids : cachedIds(p.parts) })), headerIds };
  };

  /**
   * New segments of a request: a few KB are tokenized here at once (well under a millisecond); more go
   * to the encode thread, so the event loop is never held by tokenizing. Should that thread fail to
   * start, they are tokenized here a slice at a time instead.
   */
  const encodeNew = async (segs: Piece[][], turn: Turn): Promise<Array<PromptSegment["ids"]>> => {
    let chars = 0;
    for (const seg of segs) for (const p of seg) chars += typeof p === "string" ? p.length : 1;
    if (chars <= INLINE_CHARS) return segs.map(encodePieces);
    let encoded: Int32Array[] | null = null;
    try {
      encoded = await encodeInWorker(segs, () => turn.maybeYield());
    } catch (err) {
      if (!workerFailed) console.warn(`agentjet: qwen3 encode thread unavailable, tokenizing on the event loop in slices: ${String(err)}`);
      workerFailed = true;
    }
    if (encoded !== null) return encoded;
    const out: number[][] = [];
    for (const seg of segs) out.push(await encodePiecesSliced(seg, turn));
    return out;
  };

  const renderChatAsync = async (messages: readonly ChatTurnMessage[], options?: RenderOptions): Promise<RenderedPrompt> => {
    const turn = new Turn(YIELD_AFTER_MS);
    // Each loop here lets the event loop in once it held it YIELD_AFTER_MS: a request of 2,000 short
    // messages, none cached, held it 11-12 ms on end planning, finding and cutting its segments.
    const { planned, headerIds, message } = planner(messages, options);
    for (let i = 0; i < messages.length; i++) {
      if (turn.due()) await turn.yieldNow();
      message(i);
    }
    // each new segment once (a prompt may repeat a message), in order
    const fresh: Array<{ key: SegmentKey; pieces: Piece[] }> = [];
    const freshIndex = new SegmentCache<number>(Number.POSITIVE_INFINITY);
    let long = false;
    // each segment's ids: spliced or cached, or its index in `fresh`
    const slots: Array<{ ids: PromptSegment["ids"] | undefined; index: number }> = [];
    for (const p of planned) {
      if (turn.due()) await turn.yieldNow();
      if ("ids" in p) {
        slots.push({ ids: p.ids, index: -1 });
        continue;
      }
      const key = keyOf(p.parts);
      if (key.long.length > 0) long = true;
      const ids = segments.find(key);
      const index = ids === undefined ? freshIndex.get(key, () => fresh.push({ key, pieces: pieces(p.parts) }) - 1) : -1;
      slots.push({ ids, index });
    }
    // a long message was compared with the cache above: what follows (packing it for the encode thread) gets a turn of its own
    if (long) await turn.yieldNow();
    const made = await encodeNew(fresh.map((f) => f.pieces), turn);
    // kept without comparing them with the cache again (a 4 MB message against another of its length): a duplicate entry is harmless
    for (let i = 0; i < fresh.length; i++) {
      if (turn.due()) await turn.yieldNow();
      segments.add(fresh[i]!.key, made[i]!);
    }
    const segs: PromptSegment[] = [];
    for (let i = 0; i < planned.length; i++) {
      if (turn.due()) await turn.yieldNow();
      const p = planned[i]!;
      const slot = slots[i]!;
      segs.push({ role: p.role, text: p.text, ids: slot.ids ?? made[slot.index]! });
    }
    return { segments: segs, headerIds };
  };

  /** Control-token strings become their ids; the text between them is tokenized as in `encodeNew`. */
  const encodeAsync = async (text: string): Promise<PromptSegment["ids"]> => {
    const parts: Piece[] = [];
    let last = 0;
    for (const m of text.matchAll(ADDED)) {
      parts.push(text.slice(last, m.index), addedIds.get(m[0])!);
      last = m.index + m[0].length;
    }
    parts.push(text.slice(last));
    return (await encodeNew([parts], new Turn(YIELD_AFTER_MS)))[0]!;
  };

  // A byte-level BPE piece is its bytes, each written as one character (the decoder's table maps them
  // back); an added token (<|im_end|>, <tool_call>) is its text.
  // (the table's bytes are numbers or their decimal strings, as the package built it)
  const byteOf = (hf.decoder as unknown as { byte_decoder: Record<string, number | string> }).byte_decoder;
  const addedText = new Map(hf.added_tokens.map((t) => [t.id, t.content] as const));
  const tokenBytes = (id: number): number[] => {
    const added = addedText.get(id);
    if (added !== undefined) return [...Buffer.from(added, "utf8")];
    return [...(hf.model.vocab[id] ?? "")].map((c) => Number(byteOf[c] ?? 0));
  };

  cached = {
    name: "qwen3",
    vocabSize: hf.model.vocab.length,
    stopIds: [imEnd, endOfText],
    encode,
    encodeAsync,
    decode,
    tokenBytes,
    renderChat,
    renderChatAsync,
    parseAssistant: parseToolCalls,
  };
  return cached;
}
