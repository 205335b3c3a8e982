import type { EpisodeStore } from "../episodes/episode-store.ts";
import type { Episode } from "../episodes/episode.ts";
import type { CallRecord } from "../tracker/call-record.ts";
import type { EndedEpisode, EpisodeStorePort } from "./ports.ts";

/** The abort kind the coordinator uses when a weight sync's drain times out. */
export const SYNC_ABANDON_KIND = "sync_timeout";

/**
 * The server's episode store seen through the coordinator's port: `ended` becomes a rewarded episode,
 * `aborted` an infrastructure failure (or `abandoned` when the coordinator aborted it itself).
 */
export function adaptEpisodeStore(store: EpisodeStore): EpisodeStorePort {
  return {
    pauseClaims: () => store.pauseClaims(),
    resumeClaims: () => store.resumeClaims(),
    inFlight: () => store.list({ state: "claimed" }).map((e) => e.episodeId),
    abandon(episodeIds) {
      for (const id of episodeIds) {
        if (store.get(id)?.state !== "claimed") continue;
        store.abort(id, { kind: SYNC_ABANDON_KIND, message: "in flight past server.syncTimeoutS during a weight update" });
      }
    },
    onEnded(listener) {
      const offEnded = store.on("ended", (e, calls) => listener(toEnded(e, calls)));
      const offAborted = store.on("aborted", (e, calls) => listener(toEnded(e, calls)));
      return () => {
        offEnded();
        offAborted();
      };
    },
  };
}

function toEnded(e: Episode, calls: readonly CallRecord[]): EndedEpisode {
  const base = { episodeId: e.episodeId, taskId: e.taskId, env: e.env, clientId: e.clientId, evaluation: e.eval, calls };
  if (e.state === "ended") return { ...base, outcome: { kind: "rewarded", rewards: e.rewards ?? {} } };
  if (e.abortReason?.kind === SYNC_ABANDON_KIND) return { ...base, outcome: { kind: "abandoned" } };
  return { ...base, outcome: { kind: "infra-failed", reason: e.abortReason?.kind ?? "aborted" } };
}
