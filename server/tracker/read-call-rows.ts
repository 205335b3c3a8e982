import type { TrackedCall } from "./call-record.ts";
import { CallRowsIncompleteError } from "./errors.ts";

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
  /** Absent from a file written before these columns, opened read-only: its rows are whole. */
  messages_from?: number;
  segments_from?: number;
  tools_repeated?: number;
  prompt_tokens?: number | null;
}

/** A row's messages or segments whole: the first `from` of its agent's previous call's, then the row's own. */
export function withLeftOut<T>(previous: readonly T[], from: number, own: T[]): T[] {
  return from === 0 ? own : previous.slice(0, from).concat(own);
}

/**
 * Rows of `calls` back into the calls the tracker recorded, whole: each row's left-out messages, segments
 * and tools come from its agent's previous call, which must come before it (read an episode's rows
 * ordered by agent and seq; a row that leaves nothing out needs none). Calls that repeat share those objects.
 */
export function fromCallRows(rows: readonly CallRow[]): TrackedCall[] {
  const last = new Map<string, TrackedCall>();
  return rows.map((r) => {
    const key = `${r.episode_id}\u0000${r.agent_id}`;
    const messagesFrom = r.messages_from ?? 0;
    const segmentsFrom = r.segments_from ?? 0;
    const toolsRepeated = r.tools_repeated === 1;
    let previous: TrackedCall | undefined;
    if (messagesFrom > 0 || segmentsFrom > 0 || toolsRepeated) {
      previous = last.get(key);
      if (previous === undefined || previous.seq >= r.seq || previous.messages.length < messagesFrom || previous.segments.length < segmentsFrom) {
        throw new CallRowsIncompleteError(
          `call ${r.call_id} (episode ${r.episode_id}, agent ${r.agent_id}, seq ${r.seq}) repeats its agent's previous call, which is not among the rows read before it: read an episode's calls in order (ORDER BY agent_id, seq)`,
        );
      }
    }
    const call = fromCallRow(r, {
      messages: withLeftOut(previous?.messages ?? [], messagesFrom, JSON.parse(r.messages) as unknown[]),
      segments: withLeftOut(previous?.segments ?? [], segmentsFrom, JSON.parse(r.segments) as TrackedCall["segments"]),
      tools: toolsRepeated ? previous!.tools : r.tools === null ? null : (JSON.parse(r.tools) as unknown[]),
    });
    last.set(key, call);
    return call;
  });
}

/** A row with its messages, segments and tools already whole. */
function fromCallRow(r: CallRow, whole: Pick<TrackedCall, "messages" | "segments" | "tools">): TrackedCall {
  return {
    callId: r.call_id,
    episodeId: r.episode_id,
    agentId: r.agent_id,
    policy: r.policy,
    trainable: r.trainable === 1,
    seq: r.seq,
    messages: whole.messages,
    tools: whole.tools,
    segments: whole.segments,
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
