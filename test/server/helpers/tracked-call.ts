import type { TrackedCall } from "../../../server/tracker/tracker.ts";

/** A recorded call of agent `solver` on policy `main`: a user's "hi", two output tokens; `fields` names the call and overrides the rest. */
export function trackedCall(fields: Pick<TrackedCall, "callId" | "episodeId"> & Partial<TrackedCall>): TrackedCall {
  return {
    agentId: "solver",
    policy: "main",
    trainable: true,
    seq: 0,
    messages: [{ role: "user", content: "hi" }],
    tools: null,
    segments: [{ role: "user", text: "hi", ids: [1, 2] }],
    headerIds: [3],
    outputIds: [4, 5],
    outputLogprobs: [-0.1, -0.2],
    outputText: "ok",
    finishReason: "stop",
    version: 0,
    startedAt: 0,
    latencyMs: 1,
    ...fields,
  };
}
