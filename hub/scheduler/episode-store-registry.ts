import type { EpisodeStore } from "../../server/episodes/episode-store.ts";
import type { EpisodeRegistry, RegistryEvent } from "./port.ts";

/** The swarm server's `EpisodeStore` as the scheduler's registry. */
export function registryFromEpisodeStore(store: EpisodeStore): EpisodeRegistry {
  return {
    register(input) {
      store.register({
        episodeId: input.episodeId,
        taskId: input.taskId,
        env: input.env,
        eval: input.purpose === "eval",
        agents: Object.fromEntries(input.agents.map((a) => [a.agentId, { kind: a.target.kind, target: a.target.name }])),
        metadata: { groupId: input.groupId, envVersion: input.envVersion, roles: Object.fromEntries(input.agents.map((a) => [a.agentId, a.role])) },
        samplingKey: input.samplingKey,
      });
    },
    claim(episodeId, clientId) {
      const r = store.claim({ episodeId, clientId });
      return r.kind === "claimed" ? { kind: "claimed", keys: r.keys } : { kind: "paused" };
    },
    heartbeat(episodeId) {
      // An episode the store already finished or reclaimed has nothing left to keep alive.
      if (store.get(episodeId)?.state === "claimed") store.heartbeat(episodeId);
    },
    end(episodeId, rewards, info, code) {
      store.end(episodeId, { rewards, metadata: code ? { ...info, code } : info });
    },
    abort(episodeId, reason) {
      const state = store.get(episodeId)?.state;
      if (state === "claimed" || state === "registered") store.abort(episodeId, reason);
    },
    claimsPaused: () => store.claimsPaused(),
    subscribe(listener: (event: RegistryEvent) => void) {
      const offs = [
        store.on("reclaimed", (e) => listener({ type: "reclaimed", episodeId: e.episodeId, kind: "reclaimed" })),
        // The server gave up episodes on its own (a weight sync ran past its timeout): re-run them.
        store.on("abandoned", (e) => listener({ type: "reclaimed", episodeId: e.episodeId, kind: "abandoned" })),
        store.on("resumed", () => listener({ type: "claims-resumed" })),
      ];
      return () => {
        for (const off of offs) off();
      };
    },
  };
}
