import type { EndedEpisode, EpisodeOutcome, EpisodeStorePort } from "../training/ports.ts";
import type { CallRecord } from "../tracker/call-record.ts";
import type { Episode } from "./episode.ts";
import type { EpisodeStore } from "./episode-store.ts";

function toEnded(episode: Episode, calls: CallRecord[], outcome: EpisodeOutcome): EndedEpisode {
  return {
    episodeId: episode.episodeId,
    taskId: episode.taskId,
    env: episode.env,
    groupId: typeof episode.metadata.groupId === "string" ? episode.metadata.groupId : null,
    clientId: episode.clientId,
    evaluation: episode.eval,
    outcome,
    calls,
    agents: episode.agents,
  };
}

/**
 * The store as the training coordinator's port: ended episodes arrive as `rewarded`, aborted ones as
 * `infra-failed` (or `abandoned` when the server gave them up). `calls` are the trainable (policy) calls.
 */
export function createEpisodeStorePort(store: EpisodeStore): EpisodeStorePort {
  return {
    pauseClaims: () => store.pauseClaims(),
    resumeClaims: () => store.resumeClaims(),
    inFlight: () => store.inFlight(),
    abandon: (ids) => {
      store.abandon(ids, "in flight past server.syncTimeoutS during a weight update");
    },
    onEnded(listener) {
      const offEnded = store.on("ended", (e, calls) => listener(toEnded(e, calls, { kind: "rewarded", rewards: e.rewards ?? {} })));
      const offAborted = store.on("aborted", (e, calls) => {
        const reason = e.abortReason ?? { kind: "unknown", message: "" };
        const outcome: EpisodeOutcome =
          reason.kind === "abandoned" ? { kind: "abandoned" } : { kind: "infra-failed", reason: `${reason.kind}: ${reason.message}` };
        listener(toEnded(e, calls, outcome));
      });
      return () => {
        offEnded();
        offAborted();
      };
    },
  };
}
