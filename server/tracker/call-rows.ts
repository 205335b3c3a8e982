import type { TrackedCall } from "./call-record.ts";

/**
 * A call as it is written: as the tracker keeps it, except that a long segment's ids may be an Int32Array
 * (call-writer.ts moves them to the writer thread in one buffer); they are written as the array they stand for.
 */
export interface RowCall extends Omit<TrackedCall, "segments"> {
  segments: ReadonlyArray<Omit<TrackedCall["segments"][number], "ids"> & { ids: readonly number[] | Int32Array }>;
}

/** One call as a row of `calls`; shared by the writer thread and the in-thread writer. */
export const INSERT_CALL = `INSERT INTO calls (call_id, episode_id, agent_id, policy, trainable, seq, messages, tools, segments, header_ids,
       output_ids, output_logprobs, output_text, finish_reason, version, started_at, latency_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** The values of `INSERT_CALL`, in its column order (positional binding names no keys). */
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
    JSON.stringify(call.headerIds),
    JSON.stringify(call.outputIds),
    JSON.stringify(call.outputLogprobs),
    call.outputText,
    call.finishReason,
    call.version,
    call.startedAt,
    call.latencyMs,
  ];
}

/** The segments' JSON, Int32Array ids as number arrays. */
function segmentsJson(segments: RowCall["segments"]): string {
  if (!segments.some((s) => ArrayBuffer.isView(s.ids))) return JSON.stringify(segments);
  return JSON.stringify(segments, (_key, value: unknown) => (value instanceof Int32Array ? Array.from(value) : value));
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
