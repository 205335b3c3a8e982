import { describe, expect, it } from "vitest";
import type { Episode } from "../../../server/episodes/episode.ts";
import {
  abortEpisode,
  claimEpisode,
  endEpisode,
  isIdle,
  reclaimEpisode,
  refuseActivity,
  registeredEpisode,
  type Transition,
} from "../../../server/episodes/state-machine.ts";

const agents = { solver: { kind: "policy" as const, target: "main" } };
const registered = (): Episode => registeredEpisode({ taskId: "t", env: "smoke", agents, metadata: { groupId: "g" } }, "e1", 100, 7);

function ok(t: Transition): Episode {
  if (t.kind !== "ok") throw new Error(`expected ok, got ${t.kind} (${t.state} -> ${t.action})`);
  return t.episode;
}

describe("episode state machine", () => {
  it("registers with no attempt, its own copy of agents and metadata, and the sampling seed given", () => {
    const input = { taskId: "t", env: "smoke", agents: { solver: { kind: "policy" as const, target: "main" } }, metadata: { a: 1 } };
    const e = registeredEpisode(input, "e1", 100, null);
    expect(e).toMatchObject({ episodeId: "e1", state: "registered", attempt: 0, eval: false, createdAt: 100, clientId: null, samplingSeed: null });
    input.agents.solver.target = "changed";
    input.metadata.a = 2;
    expect(e.agents.solver?.target).toBe("main");
    expect(e.metadata).toEqual({ a: 1 });
  });

  it("registered -> claimed -> ended, each a new record; the given one is never changed", () => {
    const r = registered();
    const frozenCopy = structuredClone(r);
    const c = ok(claimEpisode(r, "client-1", 200));
    expect(c).toMatchObject({ state: "claimed", attempt: 1, clientId: "client-1", claimedAt: 200, lastActivityAt: 200 });
    const end = ok(endEpisode(c, { rewards: { solver: 1 }, metadata: { turns: 3 } }, 300));
    expect(end).toMatchObject({ state: "ended", endedAt: 300, rewards: { solver: 1 }, metadata: { groupId: "g", turns: 3 } });
    expect(r).toEqual(frozenCopy);
    expect(c.state).toBe("claimed");
  });

  it("aborts from registered or claimed, keeping only the reason's kind and message", () => {
    const reason = { kind: "sandbox_crash", message: "oom", extra: true } as { kind: string; message: string };
    expect(ok(abortEpisode(registered(), reason, 5))).toMatchObject({ state: "aborted", endedAt: 5, abortReason: { kind: "sandbox_crash", message: "oom" } });
    const claimed = ok(claimEpisode(registered(), null, 1));
    expect(ok(abortEpisode(claimed, reason, 6)).abortReason).toEqual({ kind: "sandbox_crash", message: "oom" });
  });

  it("reclaims an idle claim to registered; the next claim is a new attempt", () => {
    const c = ok(claimEpisode(registered(), "c", 1_000));
    expect(isIdle(c, 1_999, 1_000)).toBe(false);
    expect(isIdle(c, 2_000, 1_000)).toBe(true);
    expect(isIdle(registered(), 1e9, 1_000)).toBe(false);
    const back = ok(reclaimEpisode(c));
    expect(back).toMatchObject({ state: "registered", attempt: 1, clientId: null, claimedAt: null, lastActivityAt: null });
    expect(ok(claimEpisode(back, "d", 3_000)).attempt).toBe(2);
  });

  it("refuses transitions it does not have, naming the state and the action", () => {
    const r = registered();
    const c = ok(claimEpisode(r, null, 1));
    const ended = ok(endEpisode(c, { rewards: { solver: 0 } }, 2));
    const aborted = ok(abortEpisode(r, { kind: "cancelled", message: "" }, 2));
    const refusal = (episode: Episode, action: string) => ({ kind: "wrong-state", episodeId: "e1", state: episode.state, action });
    expect(claimEpisode(c, null, 3)).toEqual(refusal(c, "claim"));
    expect(endEpisode(r, { rewards: {} }, 3)).toEqual(refusal(r, "end"));
    expect(reclaimEpisode(r)).toEqual(refusal(r, "claim"));
    for (const done of [ended, aborted]) {
      expect(claimEpisode(done, null, 3)).toEqual(refusal(done, "claim"));
      expect(endEpisode(done, { rewards: {} }, 3)).toEqual(refusal(done, "end"));
      expect(abortEpisode(done, { kind: "cancelled", message: "" }, 3)).toEqual(refusal(done, "abort"));
    }
  });

  it("lets only a claimed episode report activity", () => {
    const r = registered();
    expect(refuseActivity(r)).toEqual({ kind: "wrong-state", episodeId: "e1", state: "registered", action: "heartbeat" });
    expect(refuseActivity(ok(claimEpisode(r, null, 1)))).toBeNull();
  });
});
