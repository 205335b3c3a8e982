import type { Tracker } from "../tracker/tracker.ts";

/** One agent's conversation as the server recorded it: its last call's messages, then that call's reply. */
export function agentTranscript(tracker: Tracker, episodeId: string, agentId: string): unknown[] {
  const last = tracker.callsOfAgent(episodeId, agentId).at(-1);
  return last ? [...last.messages, { role: "assistant", content: last.outputText }] : [];
}
