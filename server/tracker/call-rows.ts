import { promptLength } from "../tokenizers/prompt-ids.ts";
import type { TrackedCall } from "./call-record.ts";

/**
 * A call as it is written: as the tracker keeps it, or as the writer thread unpacks it (call-wire.ts),
 * its numbers then views of the batch's typed arrays; either is written as the same row.
 */
export interface RowCall extends Omit<TrackedCall, "segments" | "headerIds" | "outputIds" | "outputLogprobs"> {
  segments: ReadonlyArray<{ role: string; text: string; ids: ArrayLike<number> }>;
  headerIds: ArrayLike<number>;
  outputIds: ArrayLike<number>;
  outputLogprobs: ArrayLike<number>;
}

/**
 * One call as a row of `calls`. A row may leave out what repeats its agent's previous call (the previous
 * row of the same episode and agent, by seq): its first `messages_from` messages and `segments_from`
 * segments are that call's, and so are its tools when `tools_repeated` is 1 (`tools` is then null);
 * `messages` and `segments` hold the rest. So an agent's episode is stored in space linear in its
 * context, not quadratic. `prompt_tokens` is the whole prompt's (its segments' ids and header ids).
 * `fromCallRows` (`read-call-rows.ts`) puts whole calls back together.
 */
export const INSERT_CALL = `INSERT INTO calls (call_id, episode_id, agent_id, policy, trainable, seq, messages, tools, segments, header_ids,
       output_ids, output_logprobs, output_text, finish_reason, version, started_at, latency_ms, messages_from, segments_from,
       tools_repeated, prompt_tokens)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

type RowSegment = RowCall["segments"][number];

/** What a row leaves out of its call: how many leading messages and segments, and whether the tools, repeat its agent's previous call's. */
export interface LeftOut {
  messages: number;
  segments: number;
  tools: boolean;
}

/** A row of an agent's first call (or of a writer that keeps no previous call) leaves nothing out. */
export const NOTHING_LEFT_OUT: LeftOut = { messages: 0, segments: 0, tools: false };

/** Ids of two arrays compared one by one at most (a longer segment counts as new unless it is the same array: comparing would hold the event loop). */
const COMPARED_IDS = 4096;

/**
 * Whether a segment repeats one of the agent's previous call: the same object, or the same role, text and
 * ids (a render makes a segment object per prompt, most often sharing its message's ids array; an earlier
 * answer spliced again may come with another array of the same ids).
 */
function sameSegment(a: RowSegment, b: RowSegment): boolean {
  if (a === b) return true;
  if (typeof a.role !== "string" || typeof a.text !== "string" || a.role !== b.role || a.text !== b.text) return false;
  if (a.ids === b.ids) return true;
  if (a.ids.length !== b.ids.length || a.ids.length > COMPARED_IDS) return false;
  for (let i = 0; i < a.ids.length; i++) if (a.ids[i] !== b.ids[i]) return false;
  return true;
}

/**
 * What `call`'s row leaves out, given its agent's previous call written: its leading messages that are
 * that call's objects (the tracker makes a repeated message the previous call's object, `repeats.ts`), its
 * leading segments that are that call's, and its tools when they are that call's object.
 */
export function leftOut(call: Pick<RowCall, "messages" | "tools" | "segments">, previous: Pick<RowCall, "messages" | "tools" | "segments">): LeftOut {
  const nm = Math.min(previous.messages.length, call.messages.length);
  let messages = 0;
  while (messages < nm && call.messages[messages] === previous.messages[messages]) messages++;
  const ns = Math.min(previous.segments.length, call.segments.length);
  let segments = 0;
  while (segments < ns && sameSegment(call.segments[segments]!, previous.segments[segments]!)) segments++;
  return { messages, segments, tools: call.tools !== null && call.tools === previous.tools };
}

type Sent = Pick<RowCall, "messages" | "tools" | "segments">;

/**
 * Each agent's last call written, by episode, for both writers (the event loop's packing for the writer
 * thread, the in-memory writer): `next(call)` is what the call's row leaves out, and the call becomes its
 * agent's last. An agent's first call leaves nothing out.
 */
export class LastCalls {
  private readonly byEpisode = new Map<string, Map<string, Sent>>();

  next(call: Sent & Pick<RowCall, "episodeId" | "agentId">): LeftOut {
    let byAgent = this.byEpisode.get(call.episodeId);
    if (byAgent === undefined) this.byEpisode.set(call.episodeId, (byAgent = new Map()));
    const previous = byAgent.get(call.agentId);
    byAgent.set(call.agentId, call);
    return previous === undefined ? NOTHING_LEFT_OUT : leftOut(call, previous);
  }

  /** The episode will write no more calls. */
  forget(episodeId: string): void {
    this.byEpisode.delete(episodeId);
  }
}

/** A number array's JSON, as JSON.stringify writes it (a non-finite number is `null`). */
export function numbersJson(a: ArrayLike<number>): string {
  if (Array.isArray(a)) return JSON.stringify(a);
  const view = a as Int32Array | Float64Array;
  if (view instanceof Float64Array) {
    for (let i = 0; i < view.length; i++) if (!Number.isFinite(view[i]!)) return JSON.stringify(Array.from(view));
  }
  // join writes each number as ToString does, which is what JSON writes for a finite number
  return `[${view.join(",")}]`;
}

/** One segment's JSON, as JSON.stringify writes a PromptSegment (`{ role, text, ids }`). */
export function segmentJson(role: string, text: string, ids: ArrayLike<number>): string {
  if (typeof role === "string" && typeof text === "string") return `{"role":${JSON.stringify(role)},"text":${JSON.stringify(text)},"ids":${numbersJson(ids)}}`;
  return JSON.stringify({ role, text, ids: Array.from(ids) });
}

/** The segments' JSON, from `from` on. */
function segmentsJson(segments: RowCall["segments"], from: number): string {
  let out = "[";
  for (let i = from; i < segments.length; i++) {
    const s = segments[i]!;
    out += i === from ? segmentJson(s.role, s.text, s.ids) : `,${segmentJson(s.role, s.text, s.ids)}`;
  }
  return `${out}]`;
}

/**
 * The values of `INSERT_CALL` for a call, less what `left` says repeats its agent's previous call, in its
 * column order (positional binding names no keys): the in-thread writer's rows; the writer thread makes
 * the same from a packed batch (`call-wire.ts`).
 */
export function toCallRow(call: RowCall, left: LeftOut = NOTHING_LEFT_OUT): unknown[] {
  return [
    call.callId,
    call.episodeId,
    call.agentId,
    call.policy,
    call.trainable ? 1 : 0,
    call.seq,
    JSON.stringify(left.messages === 0 ? call.messages : call.messages.slice(left.messages)),
    call.tools === null || left.tools ? null : JSON.stringify(call.tools),
    segmentsJson(call.segments, left.segments),
    numbersJson(call.headerIds),
    numbersJson(call.outputIds),
    numbersJson(call.outputLogprobs),
    call.outputText,
    call.finishReason,
    call.version,
    call.startedAt,
    call.latencyMs,
    left.messages,
    left.segments,
    left.tools ? 1 : 0,
    promptLength(call),
  ];
}
