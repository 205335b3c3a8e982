import type { TrackedCall } from "./call-record.ts";
import { promptLength } from "../tokenizers/prompt-ids.ts";
import { INSERT_CALL, LastCalls, numbersJson, segmentJson } from "./call-rows.ts";

/**
 * Calls as they cross to the writer thread, and back into rows there. A structured clone of the calls as
 * objects cost the event loop most of a call's recording: every object's keys written out again, every
 * number of every array tagged one by one, every message of the conversation again on every call, and a
 * long string copied in one go (a 4 MB message twice: in the messages and in its segment). A structured
 * clone also pays for each element it writes and reads (a tag, a length, an allocation on the other side),
 * so a call crosses in as few elements as it can. So:
 *
 * - a batch crosses as columns: its calls' scalars and the lengths of their strings and arrays in one
 *   Float64Array, their ids and log-probs in an Int32Array and a Float64Array, the typed arrays moved,
 *   not copied; their short strings joined into one (`text`), cut again by those lengths;
 * - names (episode and agent ids, policies, finish reasons, roles: the same few strings call after call)
 *   cross once each and are numbered: both sides keep the table (`WireMemory`, `RowMaker`);
 * - what a call repeats of its agent's previous call does not cross at all, and its row leaves it out
 *   (`leftOut`, call-rows.ts): the leading messages that call sent (the tracker keeps repeated messages as
 *   the same objects, so a repeat is the same object in the same place), its tools, its leading segments.
 *   A segment sent before by any call (tokenizers hand out a cached message's ids as the same array,
 *   whether in the same segment object or a new one) crosses as a number: the writer thread keeps the JSON
 *   of the last `SEGMENT_RING` segments sent. A call with nothing new crosses no message, no tools and no
 *   segment at all;
 * - on a large call, long strings are written into moved buffers and the ids packed a slice at a time
 *   (`packCallsSliced`), the event loop let in between.
 */
export interface WireBatch {
  /** Calls in the batch. */
  count: number;
  /** Where the batch's new names go in the writer thread's table: its length before them (0 when the table starts over). */
  namesAt: number;
  /** Names the batch numbered first, in number order. */
  names: unknown[];
  /** Per call: its callId, its outputText, then each sent segment's text (a long one crosses in `texts`) or JSON (`SegmentKind.Json`), joined. */
  text: string;
  /** Per call: its head (`Head`), its segments (`SegmentKind`), then its header ids, output ids and log-probs lengths (`TAIL`). */
  numbers: Float64Array;
  /** The calls' messages past those repeated, call after call. */
  messages: unknown[];
  /** The tools of the calls that send theirs (`ToolsKind.Sent`), in order. */
  tools: unknown[];
  /** Every packed id, call after call: each sent segment's, then the header's, then the output's. */
  ids: Int32Array;
  logprobs: Float64Array;
  /** Number arrays no typed array holds exactly (an id that is not an int32, a log-prob that is not a number), in order; their length is -1. */
  odd: Array<ArrayLike<number>>;
  /**
   * A large segment's ids (more than `SLICE`), in order, a slice per chunk: its length is written as
   * -2 - length, and its ids are the next ceil(length / SLICE) chunks (moved, each filled on its own turn).
   */
  chunks: Int32Array[];
  /** Long strings as UTF-16 chunks (`SLICE` units each), each string once; a segment's long text is written as -1 - its index here. */
  texts: ArrayBuffer[][];
  /** Long strings of the messages and tools, left out of their clone: where each goes. */
  places: WirePlace[];
}

/** A long string of a message or tools: `batch[field]`, then `path`, is where it goes. */
export interface WirePlace {
  field: "messages" | "tools";
  /** From the field's array: a message's index in `messages` (a tools' in `tools`), then keys within it. */
  path: Array<string | number>;
  text: number;
}

export interface PackedBatch {
  batch: WireBatch;
  /** What postMessage moves instead of copying. */
  transfer: ArrayBuffer[];
}

/** A call's scalars before its segments, by position. */
const enum Head {
  Trainable,
  Seq,
  Version,
  StartedAt,
  LatencyMs,
  Episode,
  Agent,
  Policy,
  FinishReason,
  CallIdLength,
  OutputTextLength,
  Segments,
  /** Its messages that repeat its agent's previous call's (they lead). */
  RepeatedMessages,
  /** Its messages past those: the next ones in `messages`. */
  NewMessages,
  Tools,
  /** Its segments that are its agent's previous call's (they lead; `Segments` counts those after them). */
  SegmentsFrom,
  /** Its prompt's tokens (all its segments' ids and its header ids). */
  PromptTokens,
  Size,
}

/** How a call's tools cross: none (null), those of its agent's previous call, or the next of `tools`. */
const enum ToolsKind {
  None = 0,
  Repeat = 1,
  Sent = 2,
}

/**
 * How a segment crosses, its kind first, then:
 * - `Repeat`: the id the writer thread keeps it under (2 numbers in all);
 * - `Sent`, `Kept`: -1 or the id to keep it under, its ids' length, its role (a name), and its text's
 *   length in `text` or -1 - its index in `texts` (`SENT_SEGMENT` numbers);
 * - `Json`, a segment whose role or text is not a string: its JSON's length in `text` (2 numbers).
 */
const enum SegmentKind {
  Sent = 0,
  Kept = 1,
  Repeat = 2,
  Json = 3,
}
const SENT_SEGMENT = 5;

/** Scalars per call after its segments: its header ids, output ids and log-probs lengths. */
const TAIL = 3;
/** Segments the writer thread keeps (the last ones sent, by id). */
const SEGMENT_RING = 2048;
/** A segment is kept when its text and ids are at most this long (the ring holds at most a few tens of MB; comparing texts stays cheap). */
const KEPT_SEGMENT = 4096;
/** The name table starts over past this many names, or characters in them (episode ids accumulate; each side forgets them then). */
const NAMES = 1 << 14;
const NAME_CHARS = 1 << 20;
/** A call this large (characters of its texts plus its ids) is packed a slice at a time. */
export const LARGE_CALL = 1 << 17;
/** A string this long crosses in a moved buffer of its own. */
const LONG_TEXT = 1 << 15;
/** Characters or numbers copied per slice of `packCallsSliced` (each well under a millisecond). */
const SLICE = 1 << 16;

type Segment = TrackedCall["segments"][number];

/** A kept segment, by its ids: the id the writer thread keeps it under, and what else it must match. */
interface KeptSegment {
  id: number;
  role: string;
  text: string;
}

/** What the event loop remembers of what it sent, to send each repeat once (the writer thread keeps the matching JSON). */
export class WireMemory {
  /** Each agent's last call sent, by episode: what a call repeats of it is left out of its row, and does not cross. */
  readonly lastCalls = new LastCalls();
  /** Kept segments by their ids array (a segment object of its own per prompt still shares its message's ids). */
  private readonly segments = new WeakMap<object, KeptSegment>();
  private nextSegment = 0;
  private readonly names = new Map<unknown, number>();
  private nameChars = 0;

  forget(episodeId: string): void {
    this.lastCalls.forget(episodeId);
  }

  /** The id of a segment sent before that the writer thread still keeps (the same ids, role and text), else undefined. */
  repeat(s: Segment): number | undefined {
    const kept = this.segments.get(s.ids);
    if (kept === undefined || this.nextSegment - kept.id > SEGMENT_RING || kept.role !== s.role || kept.text !== s.text) return undefined;
    return kept.id;
  }

  /** An id for a segment the writer thread will keep. */
  keep(s: Segment): number {
    const id = this.nextSegment++;
    this.segments.set(s.ids, { id, role: s.role, text: s.text });
    return id;
  }

  /** Where a batch's new names begin: the table's length, 0 once it started over (the batch says so). */
  namesAt(): number {
    if (this.names.size >= NAMES || this.nameChars >= NAME_CHARS) {
      this.names.clear();
      this.nameChars = 0;
    }
    return this.names.size;
  }

  /** The name's number; a name not numbered yet is numbered and added to `fresh` (it crosses with this batch). */
  name(value: unknown, fresh: unknown[]): number {
    let n = this.names.get(value);
    if (n === undefined) {
      n = this.names.size;
      this.names.set(value, n);
      this.nameChars += typeof value === "string" ? value.length : 1;
      fresh.push(value);
    }
    return n;
  }
}

/** Characters in the strings of `value` (JSON data), up to `limit` (then it stops counting). */
function textSize(value: unknown, limit: number): number {
  let n = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && n < limit) {
    const v = stack.pop();
    if (typeof v === "string") n += v.length;
    else if (typeof v === "object" && v !== null) for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push(child);
  }
  return n;
}

/** Whether a call is packed a slice at a time: its prompt (or, without segments, its messages) is large. */
export function isLargeCall(call: TrackedCall): boolean {
  let n = call.outputIds.length + call.outputText.length;
  for (const s of call.segments) n += s.text.length + s.ids.length;
  if (n >= LARGE_CALL) return true;
  // a frozen model's call has no segments: its messages tell
  return call.segments.length === 0 && textSize(call.messages, LARGE_CALL) + textSize(call.tools, LARGE_CALL) >= LARGE_CALL;
}

/** Whether a segment's role and text are strings (a tokenizer's always are), so that they cross as a name and text. */
function isPlain(s: Segment): boolean {
  return typeof s.role === "string" && typeof s.text === "string";
}

/** Writes a batch's columns, call after call. */
class BatchWriter {
  text = "";
  readonly numbers: Float64Array;
  readonly messages: unknown[] = [];
  readonly tools: unknown[] = [];
  /** Grown as segments are sent (how many repeat is known only then). */
  ids: Int32Array;
  readonly logprobs: Float64Array;
  readonly odd: Array<ArrayLike<number>> = [];
  readonly chunks: Int32Array[] = [];
  readonly names: unknown[] = [];
  readonly namesAt: number;
  /** Whether the call `begin` wrote sends its tools (the next of `tools`). */
  sendsTools = false;
  /** The call `begin` wrote: its leading segments that its agent's previous call had (its row leaves them out; the rest are sent). */
  segmentsFrom = 0;
  private n = 0;
  private at = 0;
  private lpAt = 0;

  constructor(
    calls: readonly TrackedCall[],
    readonly memory: WireMemory,
  ) {
    let numbers = 0;
    let ids = 0;
    let logprobs = 0;
    for (const c of calls) {
      numbers += Head.Size + TAIL + SENT_SEGMENT * c.segments.length;
      ids += c.headerIds.length + c.outputIds.length;
      logprobs += c.outputLogprobs.length;
    }
    this.numbers = new Float64Array(numbers);
    // room for the header and output ids, and some segments'
    this.ids = new Int32Array(ids + 1024);
    this.logprobs = new Float64Array(logprobs);
    this.namesAt = memory.namesAt();
  }

  /**
   * A call's head; returns how many of its messages repeat its agent's previous call's (`sendsTools`:
   * whether it sends its tools; `segmentsFrom`: how many of its segments repeat). Its messages past those
   * and its tools follow (`message`, `tool`), then its segments past those, then `end`.
   */
  begin(c: TrackedCall): number {
    const left = this.memory.lastCalls.next(c);
    const repeated = left.messages;
    const segmentsFrom = left.segments;
    const tools = c.tools === null ? ToolsKind.None : left.tools ? ToolsKind.Repeat : ToolsKind.Sent;
    this.sendsTools = tools === ToolsKind.Sent;
    this.segmentsFrom = segmentsFrom;
    this.text += c.callId;
    this.text += c.outputText;
    const v = this.numbers;
    const h = this.n;
    v[h + Head.Trainable] = c.trainable ? 1 : 0;
    v[h + Head.Seq] = c.seq;
    v[h + Head.Version] = c.version;
    v[h + Head.StartedAt] = c.startedAt;
    v[h + Head.LatencyMs] = c.latencyMs;
    v[h + Head.Episode] = this.name(c.episodeId);
    v[h + Head.Agent] = this.name(c.agentId);
    v[h + Head.Policy] = this.name(c.policy);
    v[h + Head.FinishReason] = this.name(c.finishReason);
    v[h + Head.CallIdLength] = c.callId.length;
    v[h + Head.OutputTextLength] = c.outputText.length;
    v[h + Head.Segments] = c.segments.length - segmentsFrom;
    v[h + Head.SegmentsFrom] = segmentsFrom;
    v[h + Head.PromptTokens] = promptLength(c);
    v[h + Head.RepeatedMessages] = repeated;
    v[h + Head.NewMessages] = c.messages.length - repeated;
    v[h + Head.Tools] = tools;
    this.n = h + Head.Size;
    return repeated;
  }

  private name(value: unknown): number {
    return this.memory.name(value, this.names);
  }

  /** The call's next message past those repeated (its index in `messages`). */
  message(m: unknown): number {
    return this.messages.push(m) - 1;
  }

  /** The call's tools, when it sends them (their index in `tools`). */
  tool(t: unknown): number {
    return this.tools.push(t) - 1;
  }

  /** A segment sent before (the writer thread keeps it): its id, true; else false. */
  repeatSegment(s: Segment): boolean {
    const id = this.memory.repeat(s);
    if (id === undefined) return false;
    this.numbers[this.n] = SegmentKind.Repeat;
    this.numbers[this.n + 1] = id;
    this.n += 2;
    return true;
  }

  /** A segment whose role or text is not a string: its JSON, made here. */
  jsonSegment(s: Segment): void {
    const json = segmentJson(s.role, s.text, s.ids);
    this.text += json;
    this.numbers[this.n] = SegmentKind.Json;
    this.numbers[this.n + 1] = json.length;
    this.n += 2;
  }

  /**
   * A segment sent now: how many of its ids were packed (-1: they are odd), and its text's index in
   * `texts` when it is long (else -1: the text joins `text`). Small, it is kept for later repeats.
   */
  segment(s: Segment, ids: number, longText: number): void {
    const kept = longText < 0 && ids >= 0 && s.text.length <= KEPT_SEGMENT && s.ids.length <= KEPT_SEGMENT;
    if (longText < 0) this.text += s.text;
    const v = this.numbers;
    const n = this.n;
    v[n] = kept ? SegmentKind.Kept : SegmentKind.Sent;
    v[n + 1] = kept ? this.memory.keep(s) : -1;
    v[n + 2] = ids;
    v[n + 3] = this.name(s.role);
    v[n + 4] = longText < 0 ? s.text.length : -1 - longText;
    this.n = n + SENT_SEGMENT;
  }

  /** The header and output ids and the log-probs, packed. */
  end(c: TrackedCall): void {
    const v = this.numbers;
    v[this.n] = this.putIds(c.headerIds);
    v[this.n + 1] = this.putIds(c.outputIds);
    v[this.n + 2] = this.putLogprobs(c.outputLogprobs);
    this.n += TAIL;
  }

  /** Room in `ids` for `more` ids past those packed. */
  private room(more: number): void {
    if (this.at + more <= this.ids.length) return;
    const grown = new Int32Array(Math.max(2 * this.ids.length, this.at + more));
    grown.set(this.ids.subarray(0, this.at));
    this.ids = grown;
  }

  /** Packs `a`'s ids `[from, to)`; false when one is not an int32 (the array then crosses as it is). */
  putIdRange(a: ArrayLike<number>, from: number, to: number): boolean {
    this.room(to);
    const ids = this.ids;
    const base = this.at;
    for (let i = from; i < to; i++) {
      const x = a[i]!;
      if ((x | 0) !== x) return false;
      ids[base + i] = x;
    }
    return true;
  }

  /** After `putIdRange` covered all of `a`: moves past it; else records it as odd. Its length, or -1. */
  tookIds(a: ArrayLike<number>, packed: boolean): number {
    if (!packed) {
      this.odd.push(a);
      return -1;
    }
    this.at += a.length;
    return a.length;
  }

  /** A slice of a large segment's ids, in a chunk of its own; false when one is not an int32 (the chunks so far are dropped, the array crosses as it is). */
  putChunk(a: ArrayLike<number>, from: number, to: number): boolean {
    const chunk = new Int32Array(to - from);
    for (let i = from; i < to; i++) {
      const x = a[i]!;
      if ((x | 0) !== x) return false;
      chunk[i - from] = x;
    }
    this.chunks.push(chunk);
    return true;
  }

  putIds(a: ArrayLike<number>): number {
    return this.tookIds(a, this.putIdRange(a, 0, a.length));
  }

  putLogprobs(a: readonly number[]): number {
    const lp = this.logprobs;
    const base = this.lpAt;
    for (let i = 0; i < a.length; i++) {
      const x = a[i]!;
      if (typeof x !== "number") {
        this.odd.push(a);
        return -1;
      }
      lp[base + i] = x;
    }
    this.lpAt += a.length;
    return a.length;
  }

  /** The batch; the episodes to forget (no more calls of theirs to send) are forgotten once it is packed. */
  done(count: number, texts: ArrayBuffer[][], places: WirePlace[], forget: readonly string[]): PackedBatch {
    for (const id of forget) this.memory.forget(id);
    const batch: WireBatch = {
      count,
      namesAt: this.namesAt,
      names: this.names,
      text: this.text,
      numbers: this.numbers,
      messages: this.messages,
      tools: this.tools,
      ids: this.ids,
      logprobs: this.logprobs,
      odd: this.odd,
      chunks: this.chunks,
      texts,
      places,
    };
    const transfer = [this.numbers.buffer, this.ids.buffer, this.logprobs.buffer, ...this.chunks.map((c) => c.buffer), ...texts.flat()] as ArrayBuffer[];
    return { batch, transfer };
  }
}

/** A call with nothing large in it, packed in one go. */
function packSmall(w: BatchWriter, c: TrackedCall): void {
  const repeated = w.begin(c);
  for (let i = repeated; i < c.messages.length; i++) w.message(c.messages[i]);
  if (w.sendsTools) w.tool(c.tools);
  for (let i = w.segmentsFrom; i < c.segments.length; i++) {
    const s = c.segments[i]!;
    if (!isPlain(s)) w.jsonSegment(s);
    else if (!w.repeatSegment(s)) w.segment(s, w.putIds(s.ids), -1);
  }
  w.end(c);
}

/**
 * Packs a batch in one go (no call in it is large), remembering what it sent in `memory`; `forget`:
 * episodes with no more calls to send, forgotten after it. The calls the tracker keeps are not touched.
 */
export function packCalls(calls: readonly TrackedCall[], memory: WireMemory, forget: readonly string[] = []): PackedBatch {
  const w = new BatchWriter(calls, memory);
  for (const c of calls) packSmall(w, c);
  return w.done(calls.length, [], [], forget);
}

/** A copy of JSON data with each long string left out (an empty string in its place), and where they were. */
function withoutLongStrings(value: unknown, path: Array<string | number>, found: Array<{ path: Array<string | number>; s: string }>): unknown {
  if (typeof value === "string") {
    if (value.length < LONG_TEXT) return value;
    found.push({ path: [...path], s: value });
    return "";
  }
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) continue;
      path.push(i);
      out[i] = withoutLongStrings(value[i], path, found);
      path.pop();
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    path.push(key);
    // a key named __proto__ (legal in JSON data) stays an own property
    Object.defineProperty(out, key, { value: withoutLongStrings((value as Record<string, unknown>)[key], path, found), enumerable: true, writable: true, configurable: true });
    path.pop();
  }
  return out;
}

/**
 * Packs a batch with large calls a slice at a time: each `next()` does a slice of the work (the caller
 * lets the event loop run in between); run to its end, it returns what `packCalls` would carry, except
 * that long strings cross as UTF-16 in moved buffers (each distinct string once), written a slice at a time.
 */
export function* packCallsSliced(calls: readonly TrackedCall[], memory: WireMemory, forget: readonly string[] = []): Generator<void, PackedBatch, void> {
  const w = new BatchWriter(calls, memory);
  const texts: ArrayBuffer[][] = [];
  const textOf = new Map<string, number>();
  const places: WirePlace[] = [];
  // no buffer is the size of a huge string or id list: allocating (and zeroing) megabytes in one go held
  // the event loop as long as copying them did; each slice fills a chunk of its own
  function* text(s: string): Generator<void, number, void> {
    const known = textOf.get(s);
    if (known !== undefined) return known;
    const chunks: ArrayBuffer[] = [];
    for (let i = 0; i < s.length; i += SLICE) {
      const end = Math.min(i + SLICE, s.length);
      const chunk = new ArrayBuffer((end - i) * 2);
      Buffer.from(chunk).write(s.slice(i, end), 0, (end - i) * 2, "utf16le");
      chunks.push(chunk);
      yield;
    }
    texts.push(chunks);
    textOf.set(s, texts.length - 1);
    return texts.length - 1;
  }
  /** A segment's ids past `SLICE`, in chunks of their own, a slice a turn: their length as written (-2 - length, or -1 when odd). */
  function* chunkedIds(ids: ArrayLike<number>): Generator<void, number, void> {
    const before = w.chunks.length;
    for (let i = 0; i < ids.length; i += SLICE) {
      if (!w.putChunk(ids, i, Math.min(i + SLICE, ids.length))) {
        w.chunks.length = before;
        return w.tookIds(ids, false);
      }
      yield;
    }
    return -2 - ids.length;
  }
  for (const c of calls) {
    if (!isLargeCall(c)) {
      packSmall(w, c);
      continue;
    }
    // the messages (past those repeated) and tools without their long strings, the strings after
    const found: Array<{ field: "messages" | "tools"; path: Array<string | number>; s: string }> = [];
    const withoutLong = (field: "messages" | "tools", value: unknown, at: number): unknown => {
      const here: Array<{ path: Array<string | number>; s: string }> = [];
      const copy = withoutLongStrings(value, [at], here);
      for (const f of here) found.push({ field, ...f });
      return here.length === 0 ? value : copy;
    };
    const repeated = w.begin(c);
    for (let i = repeated; i < c.messages.length; i++) {
      const at = w.message(c.messages[i]);
      w.messages[at] = withoutLong("messages", c.messages[i], at);
    }
    // tools that are not an array cross as they are
    if (w.sendsTools) {
      const at = w.tool(c.tools);
      if (Array.isArray(c.tools)) w.tools[at] = withoutLong("tools", c.tools, at);
    }
    for (let i = w.segmentsFrom; i < c.segments.length; i++) {
      const s = c.segments[i]!;
      if (!isPlain(s)) {
        w.jsonSegment(s);
        continue;
      }
      if (w.repeatSegment(s)) continue;
      const long = s.text.length < LONG_TEXT ? -1 : yield* text(s.text);
      const length = s.ids.length <= SLICE ? w.putIds(s.ids) : yield* chunkedIds(s.ids);
      w.segment(s, length, long);
    }
    w.end(c);
    for (const f of found) places.push({ field: f.field, path: f.path, text: yield* text(f.s) });
  }
  return w.done(calls.length, texts, places, forget);
}

/** A segment's JSON whose ids came in chunks (as `segmentJson` writes it). */
function chunkedSegmentJson(role: string, text: string, chunks: Int32Array[]): string {
  const head = segmentJson(role, text, []);
  return `${head.slice(0, -3)}[${chunks.map((c) => c.join(",")).join(",")}]}`;
}

/** Reads a batch's columns back, in the order `BatchWriter` wrote them. */
class BatchReader {
  /** Where the next call's scalars (or segment's) begin in `numbers`. */
  n = 0;
  private textAt = 0;
  private idsAt = 0;
  private lpAt = 0;
  private odd = 0;
  private chunk = 0;
  private message = 0;
  private tool = 0;

  constructor(
    readonly batch: WireBatch,
    /** The batch's long strings, whole. */
    readonly texts: string[],
  ) {}

  /** The next `length` characters of `text`. */
  string(length: number): string {
    this.textAt += length;
    return this.batch.text.slice(this.textAt - length, this.textAt);
  }

  /** The next number array of this length as written: packed ids, an odd array (-1), or a large segment's chunks (-2 - length). */
  ids(length: number): ArrayLike<number> | Int32Array[] {
    if (length === -1) return this.batch.odd[this.odd++]!;
    if (length < -1) {
      const n = Math.ceil((-2 - length) / SLICE);
      this.chunk += n;
      return this.batch.chunks.slice(this.chunk - n, this.chunk);
    }
    this.idsAt += length;
    return this.batch.ids.subarray(this.idsAt - length, this.idsAt);
  }

  logprobs(length: number): ArrayLike<number> {
    if (length < 0) return this.batch.odd[this.odd++]!;
    this.lpAt += length;
    return this.batch.logprobs.subarray(this.lpAt - length, this.lpAt);
  }

  nextMessage(): unknown {
    return this.batch.messages[this.message++];
  }

  nextTools(): unknown {
    return this.batch.tools[this.tool++];
  }
}

/**
 * The writer thread's side: turns packed batches into the values of `INSERT_CALL`, keeping the names and
 * the JSON of the segments kept (which later calls of other agents and episodes repeat). A row leaves out
 * what repeats its agent's previous call (`call-rows.ts`), so the thread keeps nothing per agent.
 */
export class RowMaker {
  private readonly ring: string[] = new Array<string>(SEGMENT_RING);
  private readonly names: unknown[] = [];

  /** The batch's rows, in order. */
  rows(batch: WireBatch): unknown[][] {
    this.names.length = batch.namesAt;
    for (const name of batch.names) this.names.push(name);
    const r = new BatchReader(batch, this.longTexts(batch));
    const rows: unknown[][] = [];
    for (let i = 0; i < batch.count; i++) rows.push(this.row(r));
    return rows;
  }

  /** The batch's long strings, whole, each also put back in its place in the messages and tools. */
  private longTexts(batch: WireBatch): string[] {
    const texts = batch.texts.map((chunks) => chunks.map((b) => Buffer.from(b).toString("utf16le")).join(""));
    for (const place of batch.places) {
      const path = place.path;
      let holder = batch[place.field] as unknown as Record<string | number, unknown>;
      for (let i = 0; i < path.length - 1; i++) holder = holder[path[i]!] as Record<string | number, unknown>;
      holder[path[path.length - 1]!] = texts[place.text];
    }
    return texts;
  }

  /** The next call's row. */
  private row(r: BatchReader): unknown[] {
    const v = r.batch.numbers;
    const h = r.n;
    r.n += Head.Size;
    const episodeId = this.names[v[h + Head.Episode]!] as string;
    const agentId = this.names[v[h + Head.Agent]!] as string;
    const callId = r.string(v[h + Head.CallIdLength]!);
    const outputText = r.string(v[h + Head.OutputTextLength]!);
    const segments = this.segmentsJson(r, v[h + Head.Segments]!);
    const headerIds = r.ids(v[r.n]!) as ArrayLike<number>;
    const outputIds = r.ids(v[r.n + 1]!) as ArrayLike<number>;
    const outputLogprobs = r.logprobs(v[r.n + 2]!);
    r.n += TAIL;
    const messages = this.messagesJson(r, v[h + Head.NewMessages]!);
    const tools = v[h + Head.Tools]! === ToolsKind.Sent ? JSON.stringify(r.nextTools()) : null;
    return [
      callId,
      episodeId,
      agentId,
      this.names[v[h + Head.Policy]!],
      v[h + Head.Trainable],
      v[h + Head.Seq],
      messages,
      tools,
      segments,
      numbersJson(headerIds),
      numbersJson(outputIds),
      numbersJson(outputLogprobs),
      outputText,
      this.names[v[h + Head.FinishReason]!],
      v[h + Head.Version],
      v[h + Head.StartedAt],
      v[h + Head.LatencyMs],
      v[h + Head.RepeatedMessages],
      v[h + Head.SegmentsFrom],
      v[h + Head.Tools] === ToolsKind.Repeat ? 1 : 0,
      v[h + Head.PromptTokens],
    ];
  }

  /** The call's segments as a JSON array. */
  private segmentsJson(r: BatchReader, count: number): string {
    let out = "[";
    for (let k = 0; k < count; k++) {
      const json = this.segmentJson(r);
      out += k === 0 ? json : `,${json}`;
    }
    return `${out}]`;
  }

  /** The next segment's JSON: kept from before, or made (and kept) now. */
  private segmentJson(r: BatchReader): string {
    const v = r.batch.numbers;
    const n = r.n;
    const kind = v[n]!;
    if (kind === SegmentKind.Repeat || kind === SegmentKind.Json) {
      r.n += 2;
      return kind === SegmentKind.Repeat ? this.ring[v[n + 1]! % SEGMENT_RING]! : r.string(v[n + 1]!);
    }
    r.n += SENT_SEGMENT;
    const ids = r.ids(v[n + 2]!);
    const role = this.names[v[n + 3]!] as string;
    const textSlot = v[n + 4]!;
    const text = textSlot >= 0 ? r.string(textSlot) : r.texts[-1 - textSlot]!;
    const json = Array.isArray(ids) && ids[0] instanceof Int32Array ? chunkedSegmentJson(role, text, ids as Int32Array[]) : segmentJson(role, text, ids as ArrayLike<number>);
    if (kind === SegmentKind.Kept) this.ring[v[n + 1]! % SEGMENT_RING] = json;
    return json;
  }

  /** The call's messages past those its row leaves out, as a JSON array. */
  private messagesJson(r: BatchReader, fresh: number): string {
    let out = "[";
    for (let k = 0; k < fresh; k++) {
      const json = JSON.stringify(r.nextMessage()) ?? "null";
      out += k === 0 ? json : `,${json}`;
    }
    return `${out}]`;
  }
}

export { INSERT_CALL };
