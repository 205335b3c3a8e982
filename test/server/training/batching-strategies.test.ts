import { describe, expect, it } from "vitest";
import { type ClientsView, selectBatch, type StrategyName } from "../../../server/training/batching-strategies.ts";
import { ClientActivity } from "../../../server/training/client-activity.ts";
import { filterEqualRewardGroups } from "../../../server/training/filter-groups.ts";
import { groupKey } from "../../../server/training/episode-samples.ts";
import type { PoolEntry } from "../../../server/training/sample-pool.ts";

let seq = 0;
function entry(taskId: string, episodeId: string, reward: number, agentId = "a", clientId = "c1", env = "smoke", groupId: string | null = null): PoolEntry {
  return { policy: "main", episodeId, agentId, taskId, env, group: groupKey({ env, groupId, taskId }), clientId, reward, seq: ++seq, sampleCount: 1 };
}
const noClients: ClientsView = { active: [], agreed: new Set() };
const opts = (strategy: StrategyName) => ({ strategy, batchTasks: 2, groupSize: 2 });
const episodesOf = (sel: ReturnType<typeof selectBatch>) => (sel.ready ? [...new Set(sel.take.map((e) => e.episodeId))] : sel.reason);

/** Client activity with clientIdleS 600, a start time, and the clients' view of it at a time. */
function activity() {
  const act = new ClientActivity(600);
  return { now: 1_000_000, act, view: (t: number): ClientsView => ({ active: act.active(t), agreed: act.agreed() }) };
}

describe("batching strategies", () => {
  // Regression (issue 18, item 1): a bare task id made one group of two environments' episodes.
  it("tasks (C2): a group is the (environment, group) it was formed in, never a task id shared across them", () => {
    const pool = [
      entry("train-0-32", "a1", 1, "a", "c1", "arith", "0:0"),
      entry("train-0-32", "c1", 0, "a", "c1", "countdown", "0:1"),
      entry("train-0-32", "x1", 0, "a", "c1", "arith", "1:3"),
    ];
    expect(episodesOf(selectBatch(pool, { strategy: "tasks", batchTasks: 1, groupSize: 2 }, noClients))).toBe("0/1 complete tasks");
    pool.push(entry("train-0-32", "a2", 0, "a", "c1", "arith", "0:0"));
    expect(episodesOf(selectBatch(pool, { strategy: "tasks", batchTasks: 1, groupSize: 2 }, noClients))).toEqual(["a1", "a2"]);
  });

  it("episodes (C1): ready at batchTasks x groupSize episodes, takes the oldest that many", () => {
    const pool = [entry("t1", "e1", 1), entry("t2", "e2", 0), entry("t1", "e3", 0, "a"), entry("t1", "e3", 1, "b")];
    expect(episodesOf(selectBatch(pool, opts("episodes"), noClients))).toBe("3/4 episodes");
    pool.push(entry("t3", "e4", 1), entry("t3", "e5", 1));
    expect(episodesOf(selectBatch(pool, opts("episodes"), noClients))).toEqual(["e1", "e2", "e3", "e4"]);
  });

  it("tasks (C2): batchTasks tasks with groupSize episodes each, the first groups to complete", () => {
    const pool = [entry("t1", "e1", 1), entry("t2", "e2", 0), entry("t2", "e3", 1), entry("t3", "e4", 1), entry("t1", "e5", 1)];
    expect(episodesOf(selectBatch(pool, opts("tasks"), noClients))).toEqual(["e2", "e3", "e1", "e5"]);
    expect(episodesOf(selectBatch(pool.slice(0, 4), opts("tasks"), noClients))).toBe("1/2 complete tasks");
    pool.push(entry("t2", "e6", 0));
    // A third t2 episode stays for a later group.
    expect(episodesOf(selectBatch(pool, opts("tasks"), noClients))).not.toContain("e6");
  });

  it("valid-tasks (C3): counts only groups with differing rewards, bringing all-equal groups to the filter", () => {
    const pool = [entry("t1", "e1", 1), entry("t1", "e2", 1), entry("t2", "e3", 0), entry("t2", "e4", 1)];
    expect(episodesOf(selectBatch(pool, opts("valid-tasks"), noClients))).toBe("1/2 valid tasks");
    expect(episodesOf(selectBatch(pool, opts("tasks"), noClients))).toEqual(["e1", "e2", "e3", "e4"]);
    pool.push(entry("t3", "e5", 0.5), entry("t3", "e6", 0));
    const sel = selectBatch(pool, opts("valid-tasks"), noClients);
    expect(episodesOf(sel)).toEqual(["e1", "e2", "e3", "e4", "e5", "e6"]);
    const filtered = filterEqualRewardGroups(sel.ready ? sel.take : [], true);
    expect(filtered.dropped).toEqual([{ group: groupKey({ env: "smoke", groupId: null, taskId: "t1" }), env: "smoke", taskId: "t1", episodes: 2, reward: 1 }]);
    expect(filtered.kept.map((e) => e.episodeId)).toEqual(["e3", "e4", "e5", "e6"]);
    expect(filterEqualRewardGroups(sel.ready ? sel.take : [], false).kept).toHaveLength(6);
  });

  it("any-client (C4) and all-clients (C5) follow agreements of active clients only", () => {
    const { now, act, view } = activity();
    const pool = [entry("t1", "e1", 1, "a", "c1"), entry("t1", "e2", 0, "a", "c2")];
    act.recordEpisodeEnd("c1", true, now);
    act.recordEpisodeEnd("c2", true, now);
    act.recordEpisodeEnd("c3", false, now); // no rewarded episode: not active
    act.recordAgreeSync("c3", now);
    expect(selectBatch(pool, opts("any-client"), view(now)).ready).toBe(false);
    act.recordAgreeSync("c1", now + 10);
    expect(episodesOf(selectBatch(pool, opts("any-client"), view(now + 10)))).toEqual(["e1", "e2"]);
    expect(episodesOf(selectBatch(pool, opts("all-clients"), view(now + 10)))).toBe("1/2 active clients agreed");
    // c2 falls silent: after clientIdleS it drops out and c1 alone is all active clients.
    expect(episodesOf(selectBatch(pool, opts("all-clients"), view(now + 600_000)))).toBe("1/2 active clients agreed");
    expect(episodesOf(selectBatch(pool, opts("all-clients"), view(now + 600_001)))).toEqual(["e1", "e2"]);
    expect(selectBatch([], opts("all-clients"), view(now + 600_001))).toEqual({ ready: false, reason: "clients agreed but the pool is empty" });
    act.resetAfterSync();
    expect(view(now + 20)).toEqual({ active: [], agreed: new Set() });
    expect(selectBatch(pool, opts("all-clients"), view(now + 20)).ready).toBe(false);
  });

  it("all-clients (C5): a client whose connection closed stays out when one of its episodes is reported ended later, until it is heard from again", () => {
    const { now, act, view } = activity();
    const pool = [entry("t1", "e1", 1, "a", "c1"), entry("t1", "e2", 0, "a", "doomed")];
    act.recordEpisodeEnd("c1", true, now);
    act.recordEpisodeEnd("doomed", true, now);
    act.recordAgreeSync("c1", now);
    expect(episodesOf(selectBatch(pool, opts("all-clients"), view(now)))).toBe("1/2 active clients agreed");
    act.forget("doomed", now + 1);
    // its last end, on another of its connections, handled after its socket's close
    act.recordEpisodeEnd("doomed", true, now + 5);
    expect(episodesOf(selectBatch(pool, opts("all-clients"), view(now + 5)))).toEqual(["e1", "e2"]);
    // it connects again (its hello, a heartbeat): it counts again from its next rewarded end
    act.touch("doomed", now + 10);
    act.recordEpisodeEnd("doomed", true, now + 11);
    expect(episodesOf(selectBatch(pool, opts("all-clients"), view(now + 11)))).toBe("1/2 active clients agreed");
  });

  it("a closed client is kept out for clientIdleS after its close, not for ever: clients that come and go do not pile up", () => {
    const { now, act, view } = activity();
    act.forget("gone-1", now);
    // a later close, past clientIdleS (600 s) after the first, lets the first go
    act.forget("gone-2", now + 600_001);
    act.recordEpisodeEnd("gone-1", true, now + 600_002);
    act.recordEpisodeEnd("gone-2", true, now + 600_002);
    expect(view(now + 600_002).active).toEqual(["gone-1"]);
  });
});
