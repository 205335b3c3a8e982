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

/** One call as a row of `calls`. */
export const INSERT_CALL = `INSERT INTO calls (call_id, episode_id, agent_id, policy, trainable, seq, messages, tools, segments, header_ids,
       output_ids, output_logprobs, output_text, finish_reason, version, started_at, latency_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

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

/** The segments' JSON. */
function segmentsJson(segments: RowCall["segments"]): string {
  let out = "[";
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    out += i === 0 ? segmentJson(s.role, s.text, s.ids) : `,${segmentJson(s.role, s.text, s.ids)}`;
  }
  return `${out}]`;
}

/** The values of `INSERT_CALL`, in its column order (positional binding names no keys); shared by the writer thread and the in-thread writer. */
export function toCallRow(call: RowCall): unknown[] {
  return [
    call.callId,
    call.episodeId,
    call.agentId,
    call.policy,
    call.trainable ? 1 : 0,
    call.seq,
    JSON.stringify(call.messages),
    call.tools === null ? null : JSON.stringify(call.tools),
    segmentsJson(call.segments),
    numbersJson(call.headerIds),
    numbersJson(call.outputIds),
    numbersJson(call.outputLogprobs),
    call.outputText,
    call.finishReason,
    call.version,
    call.startedAt,
    call.latencyMs,
  ];
}

/** A row of `calls` as SQLite returns it. */
export interface CallRow {
  call_id: string;
  episode_id: string;
  agent_id: string;
  policy: string;
  trainable: number;
  seq: number;
  messages: string;
  tools: string | null;
  segments: string;
  header_ids: string;
  output_ids: string;
  output_logprobs: string;
  output_text: string;
  finish_reason: TrackedCall["finishReason"];
  version: number;
  started_at: number;
  latency_ms: number;
}

/** A row of `calls` back into the call the tracker recorded. */
export function fromCallRow(r: CallRow): TrackedCall {
  return {
    callId: r.call_id,
    episodeId: r.episode_id,
    agentId: r.agent_id,
    policy: r.policy,
    trainable: r.trainable === 1,
    seq: r.seq,
    messages: JSON.parse(r.messages) as unknown[],
    tools: r.tools === null ? null : (JSON.parse(r.tools) as unknown[]),
    segments: JSON.parse(r.segments) as TrackedCall["segments"],
    headerIds: JSON.parse(r.header_ids) as number[],
    outputIds: JSON.parse(r.output_ids) as number[],
    outputLogprobs: JSON.parse(r.output_logprobs) as number[],
    outputText: r.output_text,
    finishReason: r.finish_reason,
    version: r.version,
    startedAt: r.started_at,
    latencyMs: r.latency_ms,
  };
}
