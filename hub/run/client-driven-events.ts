import { isFailureKind } from "../../sdk/failure-kinds.ts";
import type { Episode, EpisodeStore } from "../../server/episodes/index.ts";
import type { SchedulerEvent } from "../scheduler/index.ts";

/** Whether the episode was begun by a caller (`POST /v1/episodes/begin`), not assigned by the scheduler. */
function clientDriven(e: Episode): boolean {
  return typeof e.metadata.drivenBy === "string";
}

/**
 * The store's ended and aborted client-driven episodes as the scheduler's events, so the run counts them
 * as it counts its own (the step event's per-environment rewards and rate, `episode-end` events in
 * metrics.jsonl, failures by kind): a run fed by callers reported `perEnv: {}` and 0 episodes/s.
 */
export function clientDrivenEvents(store: EpisodeStore, listener: (e: SchedulerEvent) => void): () => void {
  const offEnded = store.on("ended", (e) => {
    if (!clientDriven(e)) return;
    const trained = Object.fromEntries(Object.entries(e.agents).flatMap(([id, b]) => (b.kind === "policy" ? [[id, id]] : [])));
    listener({
      type: "episode-end",
      env: e.env,
      taskId: e.taskId,
      purpose: e.eval ? "eval" : "train",
      trained,
      result: { episodeId: e.episodeId, attempt: e.attempt - 1, clientId: e.clientId ?? String(e.metadata.drivenBy), rewards: e.rewards ?? {}, info: e.metadata },
    });
  });
  const offAborted = store.on("aborted", (e) => {
    if (!clientDriven(e) || e.abortReason === null) return;
    // a caller may abort with words of its own: counted as its agent loop's failure, its words kept
    const { kind, message } = e.abortReason;
    const reason = isFailureKind(kind) ? { kind, message } : { kind: "workflow" as const, message: `${kind}: ${message}` };
    listener({ type: "episode-abort", episodeId: e.episodeId, clientId: e.clientId, reason, willRetry: false });
  });
  return () => {
    offEnded();
    offAborted();
  };
}
