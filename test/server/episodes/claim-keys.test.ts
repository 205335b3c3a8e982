import { describe, expect, it } from "vitest";
import { createClaimKeys } from "../../../server/episodes/claim-keys.ts";
import type { Episode, EpisodeState } from "../../../server/episodes/episode.ts";
import { claimEpisode, reclaimEpisode, registeredEpisode } from "../../../server/episodes/state-machine.ts";

const agents = { solver: { kind: "policy" as const, target: "main" }, rival: { kind: "frozen" as const, target: "opponent" } };

function claimedAt(at: number, episodeId = "e1"): Episode {
  const t = claimEpisode(registeredEpisode({ taskId: "t", env: "smoke", agents }, episodeId, 0, null), "c", at);
  if (t.kind !== "ok") throw new Error(t.kind);
  return t.episode;
}

/** Keys over plain maps: what the store keeps live and what run.db says of the rest. */
function keysOver(live: Map<string, Episode>, persisted = new Map<string, EpisodeState>(), secret = "s") {
  let reads = 0;
  const keys = createClaimKeys({
    secret,
    ttlMs: 1_000,
    live: (id) => live.get(id),
    persistedState: (id) => {
      reads += 1;
      return persisted.get(id);
    },
  });
  return { keys, reads: () => reads };
}

describe("claim keys", () => {
  it("issues one key per agent that resolves to its episode, agent and binding", () => {
    const e = claimedAt(100);
    const { keys } = keysOver(new Map([["e1", e]]));
    const issued = keys.issue(e);
    expect(Object.keys(issued).sort()).toEqual(["rival", "solver"]);
    expect(keys.authorize(issued.solver!, 500)).toEqual({ kind: "ok", episode: e, agentId: "solver", binding: agents.solver });
    expect(keys.authorize(issued.rival!, 500)).toMatchObject({ kind: "ok", agentId: "rival", binding: agents.rival });
  });

  it("expires a key ttl after its claim, also once it was verified before", () => {
    const e = claimedAt(100);
    const { keys } = keysOver(new Map([["e1", e]]));
    const key = keys.issue(e).solver!;
    expect(keys.authorize(key, 1_099).kind).toBe("ok");
    expect(keys.authorize(key, 1_100)).toEqual({ kind: "unauthorized", message: "API key expired" });
    const fresh = keysOver(new Map([["e1", e]])).keys;
    expect(fresh.authorize(key, 1_100)).toEqual({ kind: "unauthorized", message: "API key expired" });
  });

  it("refuses keys signed with another secret, and garbage", () => {
    const e = claimedAt(100);
    const { keys } = keysOver(new Map([["e1", e]]));
    const foreign = keysOver(new Map([["e1", e]]), new Map(), "other").keys.issue(e).solver!;
    expect(keys.authorize(foreign, 200)).toEqual({ kind: "unauthorized", message: "invalid API key" });
    expect(keys.authorize("sk-aj-nope.nope", 200)).toEqual({ kind: "unauthorized", message: "invalid API key" });
  });

  it("answers 409 for a finished episode (read from storage only then) and 401 for an unknown one", () => {
    const e = claimedAt(100);
    const live = new Map([["e1", e]]);
    const { keys, reads } = keysOver(live, new Map([["e1", "ended"]]));
    const key = keys.issue(e).solver!;
    expect(keys.authorize(key, 200).kind).toBe("ok");
    expect(reads()).toBe(0);
    live.delete("e1");
    expect(keys.authorize(key, 200)).toEqual({ kind: "conflict", message: "episode 'e1' is ended" });
    expect(reads()).toBe(1);
    const other = claimedAt(100, "e2");
    expect(keys.authorize(keys.issue(other).solver!, 200)).toEqual({ kind: "unauthorized", message: "API key names an unknown episode" });
  });

  it("refuses the keys of an earlier attempt after a reclaim", () => {
    const first = claimedAt(100);
    const live = new Map([["e1", first]]);
    const { keys } = keysOver(live);
    const old = keys.issue(first).solver!;
    const back = reclaimEpisode(first);
    if (back.kind !== "ok") throw new Error(back.kind);
    live.set("e1", back.episode);
    expect(keys.authorize(old, 200)).toEqual({ kind: "conflict", message: "episode 'e1' was reclaimed; this key's claim is over" });
    const second = claimEpisode(back.episode, "c", 300);
    if (second.kind !== "ok") throw new Error(second.kind);
    live.set("e1", second.episode);
    expect(keys.authorize(old, 400).kind).toBe("conflict");
    expect(keys.authorize(keys.issue(second.episode).solver!, 400).kind).toBe("ok");
  });

  it("refuses a key whose agent the episode binds to another model", () => {
    const e = claimedAt(100);
    const live = new Map([["e1", e]]);
    const { keys } = keysOver(live);
    const key = keys.issue(e).solver!;
    live.set("e1", { ...e, agents: { solver: { kind: "policy", target: "other" } } });
    expect(keys.authorize(key, 200)).toEqual({ kind: "unauthorized", message: "API key does not match the episode's agents" });
  });
});
