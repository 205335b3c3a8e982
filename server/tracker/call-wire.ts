import type { TrackedCall } from "./call-record.ts";
import { INSERT_CALL, numbersJson, segmentJson } from "./call-rows.ts";

/**
 * Calls as they cross to the writer thread, and back into rows there. A structured clone of the calls as
 * objects cost the event loop most of a call's recording: every object's keys written out again, every
 * number of every array tagged one by one, every message of the conversation again on every call, and a
 * long string copied in one go (a 4 MB message twice: in the messages and in its segment). So:
 *
 * - a batch crosses as columns: its calls' strings in one array, their scalars and the lengths of their
 *   arrays in one Float64Array, their ids and log-probs in an Int32Array and a Float64Array, the typed
 *   arrays moved, not copied;
 * - what a call repeats crosses once: the messages its agent's previous call already sent (the tracker
 *   keeps repeated messages as the same objects, so a repeat is the same object in the same place), the
 *   same tools, and a prompt segment already sent (tokenizers hand out a cached message's segment as the
 *   same object). The writer thread keeps the JSON it made of them: each agent's last messages and tools
 *   (until its episode is forgotten), and the last `SEGMENT_RING` segments sent;
 * - on a large call, long strings are written into moved buffers and the ids packed a slice at a time
 *   (`packCallsSliced`), the event loop let in between.
 */
export interface WireBatch {
  /** Calls in the batch. */
  count: number;
  /** Per call: callId, episodeId, agentId, policy, outputText, finishReason, then each sent segment's role and text. */
  strings: unknown[];
  /**
   * Per call: trainable (0/1), seq, version, startedAt, latencyMs, segments, messages repeated from the
   * agent's previous call, tools repeated (0/1); then per segment its kind (`SegmentKind`), id, ids length
   * and long text; then header ids, output ids and log-probs lengths.
   */
  numbers: Float64Array;
  /** Per call: its messages past those repeated. */
  messages: unknown[];
  /** Per call: its tools (null when repeated). */
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
  /**
   * Long strings as UTF-16 chunks (`SLICE` units each), each string once; a segment's long text is its
   * index here (else -1), its string an empty one.
   */
  texts: ArrayBuffer[][];
  /** Long strings of the messages and tools, left out of their clone: where each goes. */
  places: WirePlace[];
  /** Episodes whose agents' messages and tools the writer thread can forget, once this batch's calls are written. */
  forget: string[];
}

export interface WirePlace {
  call: number;
  field: "messages" | "tools";
  path: Array<string | number>;
  text: number;
}

export interface PackedBatch {
  batch: WireBatch;
  /** What postMessage moves instead of copying. */
  transfer: ArrayBuffer[];
}

/** How a segment crosses: its own (not kept), its own kept under its id, or the id of one sent before. */
const enum SegmentKind {
  Sent = 0,
  Kept = 1,
  Repeat = 2,
}

/** Segments the writer thread keeps (the last ones sent, by id). */
const SEGMENT_RING = 2048;
/** A segment is kept when its text and ids are at most this long (the ring holds at most a few tens of MB). */
const KEPT_SEGMENT = 4096;
/** A call this large (characters of its texts plus its ids) is packed a slice at a time. */
export const LARGE_CALL = 1 << 17;
/** A string this long crosses in a moved buffer of its own. */
const LONG_TEXT = 1 << 15;
/** Characters or numbers copied per slice of `packCallsSliced` (each well under a millisecond). */
const SLICE = 1 << 16;
/** Scalars per call before its segments, per segment, and after them. */
const HEAD = 8;
const PER_SEGMENT = 4;
const TAIL = 3;

/** What the event loop remembers of what it sent, to send each repeat once (the writer thread keeps the matching JSON). */
export class WireMemory {
  /** Each agent's last messages and tools sent, by episode. */
  private readonly agents = new Map<string, Map<string, { messages: unknown[]; tools: unknown[] | null }>>();
  private readonly segmentIds = new WeakMap<object, number>();
  private nextSegment = 0;

  last(episodeId: string, agentId: string): { messages: unknown[]; tools: unknown[] | null } | undefined {
    return this.agents.get(episodeId)?.get(agentId);
  }

  sent(episodeId: string, agentId: string, messages: unknown[], tools: unknown[] | null): void {
    let byAgent = this.agents.get(episodeId);
    if (byAgent === undefined) this.agents.set(episodeId, (byAgent = new Map()));
    const last = byAgent.get(agentId);
    if (last === undefined) byAgent.set(agentId, { messages, tools });
    else {
      last.messages = messages;
      last.tools = tools;
    }
  }

  forget(episodeId: string): void {
    this.agents.delete(episodeId);
  }

  /** The id of a segment sent before that the writer thread still keeps, else undefined. */
  repeat(segment: object): number | undefined {
    const id = this.segmentIds.get(segment);
    return id !== undefined && this.nextSegment - id <= SEGMENT_RING ? id : undefined;
  }

  /** Whether a segment sent before stays one the writer thread keeps after `more` new ones are kept. */
  repeats(segment: object, more: number): boolean {
    const id = this.segmentIds.get(segment);
    return id !== undefined && this.nextSegment + more - id <= SEGMENT_RING;
  }

  /** An id for a segment the writer thread will keep. */
  keep(segment: object): number {
    const id = this.nextSegment++;
    this.segmentIds.set(segment, id);
    return id;
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

/** Writes a batch's columns, call after call. */
class BatchWriter {
  readonly strings: unknown[] = [];
  readonly numbers: Float64Array;
  readonly messages: unknown[] = [];
  readonly tools: unknown[] = [];
  readonly ids: Int32Array;
  readonly logprobs: Float64Array;
  readonly odd: Array<ArrayLike<number>> = [];
  readonly chunks: Int32Array[] = [];
  /** Whether the call `begin` wrote repeats its agent's previous tools (then they are not sent). */
  sameTools = false;
  private n = 0;
  private at = 0;
  private lpAt = 0;

  constructor(
    calls: readonly TrackedCall[],
    readonly memory: WireMemory,
    sliced = false,
  ) {
    let numbers = 0;
    let ids = 0;
    let logprobs = 0;
    let segments = 0;
    for (const c of calls) segments += c.segments.length;
    for (const c of calls) {
      numbers += HEAD + TAIL + PER_SEGMENT * c.segments.length;
      // a segment's ids are left out of the count when it stays a repeat however many new ones this batch
      // keeps, and when they are many (a large call's, packed in chunks of their own)
      for (const s of c.segments) if (!memory.repeats(s, segments) && !(sliced && s.ids.length > SLICE)) ids += s.ids.length;
      ids += c.headerIds.length + c.outputIds.length;
      logprobs += c.outputLogprobs.length;
    }
    this.numbers = new Float64Array(numbers);
    this.ids = new Int32Array(ids);
    this.logprobs = new Float64Array(logprobs);
  }

  /**
   * A call's strings and scalars; returns how many of its messages repeat its agent's previous call's
   * (`sameTools`: whether its tools do). Its messages and tools follow (`fields`), then its segments, then `end`.
   */
  begin(c: TrackedCall): number {
    this.strings.push(c.callId, c.episodeId, c.agentId, c.policy, c.outputText, c.finishReason);
    const last = this.memory.last(c.episodeId, c.agentId);
    let repeated = 0;
    if (last !== undefined) {
      const n = Math.min(last.messages.length, c.messages.length);
      while (repeated < n && c.messages[repeated] === last.messages[repeated]) repeated++;
    }
    this.sameTools = last !== undefined && c.tools !== null && c.tools === last.tools;
    this.memory.sent(c.episodeId, c.agentId, c.messages, c.tools);
    const v = this.numbers;
    const n = this.n;
    v[n] = c.trainable ? 1 : 0;
    v[n + 1] = c.seq;
    v[n + 2] = c.version;
    v[n + 3] = c.startedAt;
    v[n + 4] = c.latencyMs;
    v[n + 5] = c.segments.length;
    v[n + 6] = repeated;
    v[n + 7] = this.sameTools ? 1 : 0;
    this.n = n + HEAD;
    return repeated;
  }

  /** The call's messages past those repeated, and its tools (null when repeated). */
  fields(messages: unknown, tools: unknown): void {
    this.messages.push(messages);
    this.tools.push(tools);
  }

  /** A segment sent before (the writer thread keeps it): its id, true; else false. */
  repeatSegment(s: object): boolean {
    const id = this.memory.repeat(s);
    if (id === undefined) return false;
    const v = this.numbers;
    v[this.n] = SegmentKind.Repeat;
    v[this.n + 1] = id;
    this.n += PER_SEGMENT;
    return true;
  }

  /** A segment sent now: its role and text (or the index of its long text), and how many ids were packed (-1: they are odd). */
  segment(s: object, role: string, text: string, longText: number, ids: number, small: boolean): void {
    this.strings.push(role, text);
    const v = this.numbers;
    const n = this.n;
    const kept = small && longText < 0 && ids >= 0;
    v[n] = kept ? SegmentKind.Kept : SegmentKind.Sent;
    v[n + 1] = kept ? this.memory.keep(s) : -1;
    v[n + 2] = ids;
    v[n + 3] = longText;
    this.n = n + PER_SEGMENT;
  }

  /** The header and output ids and the log-probs, packed. */
  end(c: TrackedCall): void {
    const v = this.numbers;
    v[this.n] = this.putIds(c.headerIds);
    v[this.n + 1] = this.putIds(c.outputIds);
    v[this.n + 2] = this.putLogprobs(c.outputLogprobs);
    this.n += TAIL;
  }

  /** Packs `a`'s ids `[from, to)`; false when one is not an int32 (the array then crosses as it is). */
  putIdRange(a: ArrayLike<number>, from: number, to: number): boolean {
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

  /** The batch, its episodes to forget forgotten here too (the writer thread forgets them once it has written it). */
  done(count: number, texts: ArrayBuffer[][], places: WirePlace[], forget: string[]): PackedBatch {
    for (const id of forget) this.memory.forget(id);
    const batch: WireBatch = {
      count,
      strings: this.strings,
      numbers: this.numbers,
      messages: this.messages,
      tools: this.tools,
      ids: this.ids,
      logprobs: this.logprobs,
      odd: this.odd,
      chunks: this.chunks,
      texts,
      places,
      forget,
    };
    const transfer = [this.numbers.buffer, this.ids.buffer, this.logprobs.buffer, ...this.chunks.map((c) => c.buffer), ...texts.flat()] as ArrayBuffer[];
    return { batch, transfer };
  }
}

/** A call with nothing large in it, packed in one go. */
function packSmall(w: BatchWriter, c: TrackedCall): void {
  const repeated = w.begin(c);
  w.fields(repeated === 0 ? c.messages : c.messages.slice(repeated), w.sameTools ? null : c.tools);
  for (const s of c.segments) {
    if (w.repeatSegment(s)) continue;
    w.segment(s, s.role, s.text, -1, w.putIds(s.ids), s.text.length <= KEPT_SEGMENT && s.ids.length <= KEPT_SEGMENT);
  }
  w.end(c);
}

/**
 * Packs a batch in one go (no call in it is large), remembering what it sent in `memory`, and the
 * episodes the writer thread can forget after it. The calls the tracker keeps are not touched.
 */
export function packCalls(calls: readonly TrackedCall[], memory: WireMemory, forget: string[] = []): PackedBatch {
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
export function* packCallsSliced(calls: readonly TrackedCall[], memory: WireMemory, forget: string[] = []): Generator<void, PackedBatch, void> {
  const w = new BatchWriter(calls, memory, true);
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
  for (const [index, c] of calls.entries()) {
    if (!isLargeCall(c)) {
      packSmall(w, c);
      continue;
    }
    // the messages (past those repeated) and tools without their long strings, the strings after
    const found: Array<{ field: "messages" | "tools"; path: Array<string | number>; s: string }> = [];
    const withoutLong = (field: "messages" | "tools", value: unknown): unknown => {
      if (!Array.isArray(value)) return value;
      const here: Array<{ path: Array<string | number>; s: string }> = [];
      const copy = withoutLongStrings(value, [], here);
      for (const f of here) found.push({ field, ...f });
      return here.length === 0 ? value : copy;
    };
    const repeated = w.begin(c);
    w.fields(withoutLong("messages", repeated === 0 ? c.messages : c.messages.slice(repeated)), w.sameTools ? null : withoutLong("tools", c.tools));
    for (const s of c.segments) {
      if (w.repeatSegment(s)) continue;
      const small = s.text.length <= KEPT_SEGMENT && s.ids.length <= KEPT_SEGMENT;
      const long = s.text.length < LONG_TEXT ? -1 : yield* text(s.text);
      let length: number;
      if (s.ids.length <= SLICE) length = w.putIds(s.ids);
      else {
        const before = w.chunks.length;
        let packed = true;
        for (let i = 0; i < s.ids.length && packed; i += SLICE) {
          packed = w.putChunk(s.ids, i, Math.min(i + SLICE, s.ids.length));
          yield;
        }
        if (packed) length = -2 - s.ids.length;
        else {
          w.chunks.length = before;
          length = w.tookIds(s.ids, false);
        }
      }
      w.segment(s, s.role, long === -1 ? s.text : "", long, length, small);
    }
    w.end(c);
    for (const f of found) places.push({ call: index, field: f.field, path: f.path, text: yield* text(f.s) });
  }
  return w.done(calls.length, texts, places, forget);
}

/** A segment's JSON whose ids came in chunks (as `segmentJson` writes it). */
function chunkedSegmentJson(role: string, text: string, chunks: Int32Array[]): string {
  const head = segmentJson(role, text, []);
  return `${head.slice(0, -3)}[${chunks.map((c) => c.join(",")).join(",")}]}`;
}

/**
 * The writer thread's side: turns packed batches into the values of `INSERT_CALL`, keeping the JSON of
 * what later calls repeat (each agent's last messages and tools, the last segments kept).
 */
export class RowMaker {
  private readonly ring: string[] = new Array<string>(SEGMENT_RING);
  private readonly agents = new Map<string, Map<string, { messages: string[]; tools: string | null }>>();

  /** The batch's rows, in order; then it forgets the episodes the batch names. */
  rows(batch: WireBatch): unknown[][] {
    const texts = batch.texts.map((chunks) => chunks.map((b) => Buffer.from(b).toString("utf16le")).join(""));
    for (const place of batch.places) {
      const path = place.path;
      let holder = batch[place.field][place.call] as Record<string | number, unknown>;
      for (let i = 0; i < path.length - 1; i++) holder = holder[path[i]!] as Record<string | number, unknown>;
      holder[path[path.length - 1]!] = texts[place.text];
    }
    const { strings, numbers: v } = batch;
    let s = 0;
    let n = 0;
    let at = 0;
    let lpAt = 0;
    let odd = 0;
    let chunk = 0;
    const ids = (length: number): ArrayLike<number> | Int32Array[] => {
      if (length === -1) return batch.odd[odd++]!;
      if (length < -1) {
        const n = Math.ceil((-2 - length) / SLICE);
        chunk += n;
        return batch.chunks.slice(chunk - n, chunk);
      }
      at += length;
      return batch.ids.subarray(at - length, at);
    };
    const rows: unknown[][] = [];
    for (let i = 0; i < batch.count; i++) {
      const callId = strings[s];
      const episodeId = strings[s + 1] as string;
      const agentId = strings[s + 2] as string;
      const policy = strings[s + 3];
      const outputText = strings[s + 4];
      const finishReason = strings[s + 5];
      s += 6;
      const segmentCount = v[n + 5]!;
      const repeated = v[n + 6]!;
      const sameTools = v[n + 7] === 1;
      const head = n;
      n += HEAD;
      let segments = "[";
      for (let k = 0; k < segmentCount; k++) {
        const kind = v[n]!;
        let json: string;
        if (kind === SegmentKind.Repeat) json = this.ring[v[n + 1]! % SEGMENT_RING]!;
        else {
          const long = v[n + 3]!;
          const segmentIds = ids(v[n + 2]!);
          const text = long >= 0 ? texts[long]! : (strings[s + 1] as string);
          json = Array.isArray(segmentIds) && segmentIds[0] instanceof Int32Array ? chunkedSegmentJson(strings[s] as string, text, segmentIds as Int32Array[]) : segmentJson(strings[s] as string, text, segmentIds as ArrayLike<number>);
          s += 2;
          if (kind === SegmentKind.Kept) this.ring[v[n + 1]! % SEGMENT_RING] = json;
        }
        segments += k === 0 ? json : `,${json}`;
        n += PER_SEGMENT;
      }
      segments += "]";
      const headerIds = ids(v[n]!) as ArrayLike<number>;
      const outputIds = ids(v[n + 1]!) as ArrayLike<number>;
      const lpLength = v[n + 2]!;
      n += TAIL;
      let outputLogprobs: ArrayLike<number>;
      if (lpLength < 0) outputLogprobs = batch.odd[odd++]!;
      else {
        lpAt += lpLength;
        outputLogprobs = batch.logprobs.subarray(lpAt - lpLength, lpAt);
      }
      // the messages: those repeated from the agent's previous call, then the call's own
      let byAgent = this.agents.get(episodeId);
      if (byAgent === undefined) this.agents.set(episodeId, (byAgent = new Map()));
      const last = byAgent.get(agentId);
      const parts = repeated > 0 ? last!.messages.slice(0, repeated) : [];
      for (const m of batch.messages[i] as unknown[]) parts.push(JSON.stringify(m) ?? "null");
      const tools = batch.tools[i];
      const toolsJson = sameTools ? last!.tools : tools === null ? null : JSON.stringify(tools);
      byAgent.set(agentId, { messages: parts, tools: toolsJson });
      rows.push([
        callId,
        episodeId,
        agentId,
        policy,
        v[head],
        v[head + 1],
        `[${parts.join(",")}]`,
        toolsJson,
        segments,
        numbersJson(headerIds),
        numbersJson(outputIds),
        numbersJson(outputLogprobs),
        outputText,
        finishReason,
        v[head + 2],
        v[head + 3],
        v[head + 4],
      ]);
    }
    for (const id of batch.forget) this.agents.delete(id);
    return rows;
  }
}

export { INSERT_CALL };
