import { type EpisodeStore, refusalError } from "../../server/episodes/index.ts";
import type { EpisodeRegistry, RegistryEvent } from "./port.ts";

/** The swarm server's `EpisodeStore` as the scheduler's registry. */
export function registryFromEpisodeStore(store: EpisodeStore): EpisodeRegistry {
  return {
    register(input) {
      const r = store.register({
        episodeId: input.episodeId,
        taskId: input.taskId,
        env: input.env,
        eval: input.purpose === "eval",
        agents: Object.fromEntries(input.agents.map((a) => [a.agentId, { kind: a.target.kind, target: a.target.name }])),
        metadata: { groupId: input.groupId, envVersion: input.envVersion, roles: Object.fromEntries(input.agents.map((a) => [a.agentId, a.role])) },
        samplingKey: input.samplingKey,
      });
      if (r.kind !== "ok") throw refusalError(r);
    },
    claim(episodeId, clientId) {
      const r = store.claim({ episodeId, clientId });
      if (r.kind === "not-found" || r.kind === "wrong-state") throw refusalError(r);
      return r.kind === "claimed" ? { kind: "claimed", keys: r.keys } : { kind: "paused" };
    },
    heartbeat(episodeId) {
      // An episode the store already finished or reclaimed has nothing left to keep alive: its refusal is no news.
      store.heartbeat(episodeId);
    },
    end(episodeId, rewards, info, code) {
      const r = store.end(episodeId, { rewards, metadata: code ? { ...info, code } : info });
      if (r.kind !== "ok") throw refusalError(r);
    },
    abort(episodeId, reason) {
      // One already finished has nothing left to abort: its refusal is no news.
      store.abort(episodeId, reason);
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
