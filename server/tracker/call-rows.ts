import type { TrackedCall } from "./call-record.ts";

/** One call as a row of `calls`; shared by the writer thread and the in-thread writer. */
export const INSERT_CALL = `INSERT INTO calls (call_id, episode_id, agent_id, policy, trainable, seq, messages, tools, segments, header_ids,
       output_ids, output_logprobs, output_text, finish_reason, version, started_at, latency_ms)
     VALUES (@callId, @episodeId, @agentId, @policy, @trainable, @seq, @messages, @tools, @segments, @headerIds,
       @outputIds, @outputLogprobs, @outputText, @finishReason, @version, @startedAt, @latencyMs)`;

export function toCallRow(call: TrackedCall): Record<string, unknown> {
  return {
    ...call,
    trainable: call.trainable ? 1 : 0,
    messages: JSON.stringify(call.messages),
    tools: call.tools === null ? null : JSON.stringify(call.tools),
    segments: JSON.stringify(call.segments),
    headerIds: JSON.stringify(call.headerIds),
    outputIds: JSON.stringify(call.outputIds),
    outputLogprobs: JSON.stringify(call.outputLogprobs),
  };
}
