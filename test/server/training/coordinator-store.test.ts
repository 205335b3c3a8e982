import { describe, expect, it } from "vitest";
import { openRunDb } from "../../../server/db/run-db.ts";
import { createEpisodeStore } from "../../../server/episodes/episode-store.ts";
import { TrainingCoordinator, type StepReport } from "../../../server/training/coordinator.ts";
import { SamplePool } from "../../../server/training/sample-pool.ts";
import { createEpisodeStorePort } from "../../../server/episodes/episode-store-port.ts";
import { recordEpisode, step } from "./helpers/record-episode.ts";
import { createTinyEngine, manualClock, rewardedEpisode, trainingConfig } from "./helpers/training-parts.ts";

/** A coordinator on a real episode store (in-memory run.db, a manual clock), with what it reported. */
function onStore(config: ReturnType<typeof trainingConfig>) {
  const db = openRunDb(":memory:");
  const clock = manualClock(1_000);
  const store = createEpisodeStore({ db, policies: ["main"], reclaimTimer: false, now: clock.now, keySecret: "k" });
  const reports: StepReport[] = [];
  const warnings: string[] = [];
  const coord = new TrainingCoordinator({
    store: createEpisodeStorePort(store),
    engines: { main: createTinyEngine() },
    pool: new SamplePool(db),
    config,
    now: clock.now,
    sleep: clock.sleep,
    tickMs: 0,
    onStep: (r) => reports.push(r),
    onWarning: (m) => warnings.push(m),
  });
  coord.start();
  return { store, coord, reports, warnings };
}

/** Plays episode `id` of task t1 on `store` (claimed by c1, its calls recorded), ended with `reward` or left open (null). */
function player(store: ReturnType<typeof createEpisodeStore>) {
  return (id: string, reward: number | null): void => {
    store.register({ episodeId: id, taskId: "t1", env: "smoke", agents: { a: { kind: "policy", target: "main" } } });
    expect(store.claim({ episodeId: id, clientId: "c1" }).kind).toBe("claimed");
    for (const c of rewardedEpisode(id, "t1", 0).calls) store.tracker.record({ ...c, trainable: true });
    if (reward !== null) store.end(id, { rewards: { a: reward } });
  };
}

describe("TrainingCoordinator on the server's episode store", () => {
  it("pools ended episodes, pauses real claims while it trains, and abandons a stuck episode", async () => {
    const { store, coord, reports } = onStore(trainingConfig({ batchTasks: 1 }, { syncTimeoutS: 1 }));
    const run = player(store);
    run("stuck", null);
    run("crashed", null);
    store.abort("crashed", { kind: "sandbox_crash", message: "boom" });
    run("e1", 1);
    expect(coord.phase()).toBe("rolling");
    run("e2", 0);
    expect(store.claimsPaused()).toBe(true);
    await coord.whenIdle();
    expect(store.claimsPaused()).toBe(false);
    expect(store.get("stuck")?.state).toBe("aborted");
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ outcome: "trained", episodes: 2, samples: 2, abandoned: 1, versionAfter: 1 });
    expect(coord.counters()).toMatchObject({ infraFailed: 1, abandonedEnded: 1, abandonedByDrain: 1, episodesPooled: 2 });
    await coord.stop();
    store.close();
  });

  it("says which open episodes a weight update waits for once it has waited a while", async () => {
    const { store, coord, warnings } = onStore(trainingConfig({ batchTasks: 1 }, { syncTimeoutS: 60 }));
    const run = player(store);
    run("client-driven", null);
    run("e1", 1);
    run("e2", 0);
    await coord.whenIdle();
    expect(warnings.filter((w) => w.includes("weight update waits"))).toEqual([
      "the weight update waits for 1 open episode ('client-driven') to end or abort; those still open at server.syncTimeoutS (60 s) are abandoned",
    ]);
    await coord.stop();
    store.close();
  });

  // A stop waited for the sync in progress, whose drain waited for every open episode until syncTimeoutS:
  // one client-driven episode left open held Ctrl-C and `POST /v1/engine/stop` for up to a minute.
  it("a stop during a drain does not wait for open episodes: no step trains, and claims resume", async () => {
    const db = openRunDb(":memory:");
    const store = createEpisodeStore({ db, policies: ["main"], reclaimTimer: false, keySecret: "k" });
    const reports: StepReport[] = [];
    const coord = new TrainingCoordinator({
      store: createEpisodeStorePort(store),
      engines: { main: createTinyEngine() },
      pool: new SamplePool(db),
      config: trainingConfig({ batchTasks: 1 }, { syncTimeoutS: 600 }),
      tickMs: 0,
      onStep: (r) => reports.push(r),
    });
    coord.start();
    const run = player(store);
    run("open", null);
    run("e1", 1);
    run("e2", 0);
    expect(coord.phase()).toBe("draining");
    // before: this waited out syncTimeoutS (the test's timeout ends it first)
    await coord.stop();
    expect([reports.length, coord.phase(), store.claimsPaused(), store.get("open")?.state]).toEqual([0, "rolling", false, "claimed"]);
    store.close();
  });

  // Regression: an ended episode whose agent of a trained policy made no call (a game over before its seat
  // moved) or only overflowed calls pooled nothing, so its group never reached groupSize and the group's
  // other episodes waited in the pool for good (a tic-tac-toe run with separate policies hung at the cap).
  it("an episode whose policy agent made no trainable call counts in its group, with no samples and no say in the signal", async () => {
    const { store, coord, reports } = onStore(trainingConfig({ batchTasks: 2, groupSize: 3 }));
    const run = (id: string, task: string, reward: number, calls: "played" | "none" | "overflowed") => {
      store.register({ episodeId: id, taskId: task, env: "smoke", agents: { a: { kind: "policy", target: "main" } } });
      expect(store.claim({ episodeId: id, clientId: "c1" }).kind).toBe("claimed");
      if (calls !== "none") {
        for (const c of rewardedEpisode(id, task, 0).calls) {
          store.tracker.record(calls === "played" ? { ...c, trainable: true } : { ...c, trainable: true, outputIds: [], outputLogprobs: [], outputText: "", finishReason: "overflow" });
        }
      }
      store.end(id, { rewards: { a: reward } });
    };
    run("t6-a", "t6", 1, "played");
    run("t6-b", "t6", 0, "played");
    run("t6-c", "t6", 1, "overflowed");
    run("t7-a", "t7", 1, "played");
    run("t7-b", "t7", 0, "played");
    // the one without a call: reward 0.5, which would make the group's rewards unequal if it counted
    run("t7-c", "t7", 0.5, "none");
    await coord.whenIdle();
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ outcome: "trained", samples: 4, groups: 2, droppedGroups: [] });
    expect(reports[0]!.episodeIds.sort()).toEqual(["t6-a", "t6-b", "t6-c", "t7-a", "t7-b", "t7-c"]);
    await coord.stop();
    store.close();
  });

  it("a complete group whose only differing reward belongs to an episode with nothing to train is filtered as equal", async () => {
    const { store, coord, reports } = onStore(trainingConfig({ batchTasks: 1, groupSize: 3 }));
    for (const [id, reward, played] of [["a", 1, true], ["b", 1, true], ["c", 0, false]] as const) {
      store.register({ episodeId: id, taskId: "t", env: "smoke", agents: { a: { kind: "policy", target: "main" } } });
      store.claim({ episodeId: id, clientId: "c1" });
      if (played) for (const c of rewardedEpisode(id, "t", 0).calls) store.tracker.record({ ...c, trainable: true });
      store.end(id, { rewards: { a: reward } });
    }
    await coord.whenIdle();
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ outcome: "no-signal", samples: 0 });
    expect(reports[0]!.droppedGroups).toHaveLength(1);
    await coord.stop();
    store.close();
  });

  // Regression: the run ended when its slowest policy reached run.steps, and a policy with more episodes
  // trained on past it meanwhile (werewolves' six villager seats against three wolves).
  it("with maxSteps, a policy that reached it trains no further and pools nothing more while another catches up", async () => {
    const db = openRunDb(":memory:");
    const clock = manualClock(1_000);
    const store = createEpisodeStore({ db, policies: ["fast", "slow"], reclaimTimer: false, now: clock.now, keySecret: "k" });
    const engines = { fast: createTinyEngine(), slow: createTinyEngine({ seed: 2 }) };
    const reports: StepReport[] = [];
    const pool = new SamplePool(db);
    const coord = new TrainingCoordinator({
      store: createEpisodeStorePort(store),
      engines,
      pool,
      config: trainingConfig({ batchTasks: 1, groupSize: 2, filterEqualRewards: false }),
      maxSteps: 2,
      now: clock.now,
      sleep: clock.sleep,
      tickMs: 0,
      onStep: (r) => reports.push(r),
    });
    coord.start();
    let n = 0;
    // one group of 2 episodes of task `task`, its agents playing `policies`
    const group = async (task: string, policies: readonly string[]) => {
      for (const reward of [0, 1]) {
        const id = `e${++n}`;
        const agents = Object.fromEntries(policies.map((p, i) => [`a${i}`, { kind: "policy" as const, target: p }]));
        store.register({ episodeId: id, taskId: task, env: "smoke", agents });
        expect(store.claim({ episodeId: id, clientId: "c1" }).kind).toBe("claimed");
        policies.forEach((policy, i) => {
          for (const c of recordEpisode([step(`${task}?`), step("ok.")], { episodeId: id, agentId: `a${i}`, policy, task })) store.tracker.record({ ...c, trainable: true });
        });
        store.end(id, { rewards: Object.fromEntries(policies.map((_, i) => [`a${i}`, reward])) });
      }
      await coord.whenIdle();
    };
    // fast-only groups: fast trains to its 2 steps, then no further
    for (const t of ["t1", "t2", "t3"]) await group(t, ["fast"]);
    expect([engines.fast.version(), engines.slow.version()]).toEqual([2, 0]);
    expect(pool.entries("fast")).toHaveLength(0);
    // groups with both: only slow trains, and fast pools nothing
    for (const t of ["t4", "t5", "t6"]) await group(t, ["fast", "slow"]);
    expect([engines.fast.version(), engines.slow.version()]).toEqual([2, 2]);
    expect(pool.entries("fast")).toHaveLength(0);
    expect(reports.filter((r) => r.outcome === "trained").map((r) => r.policy)).toEqual(["fast", "fast", "slow", "slow"]);
    await coord.stop();
    store.close();
  });

  // Regression: under tasks, a client-driven group with a member aborted never completed and stayed in the
  // pool; past maxCachedEpisodes begin answered 503 for good (a soak would have wedged after about 3 hours).
  it("a full pool with nothing running and no batch ready drops its stalled groups, oldest first, and says so", async () => {
    const { store, coord, reports, warnings } = onStore(trainingConfig({ batchTasks: 1, groupSize: 3, maxCachedEpisodes: 4 }));
    const begin = (id: string, task: string) => {
      store.register({ episodeId: id, taskId: task, env: "smoke", agents: { a: { kind: "policy", target: "main" } } });
      expect(store.claim({ episodeId: id, clientId: "c1" }).kind).toBe("claimed");
      for (const c of rewardedEpisode(id, task, 0).calls) store.tracker.record({ ...c, trainable: true });
    };
    // two groups of 3, each with its third member aborted: 4 pooled episodes, the cap
    for (const task of ["ta", "tb"]) {
      for (const [i, reward] of [[1, 0], [2, 1]] as const) {
        begin(`${task}-${i}`, task);
        store.end(`${task}-${i}`, { rewards: { a: reward } });
      }
      begin(`${task}-3`, task);
      store.abort(`${task}-3`, { kind: "workflow", message: "the caller gave up" });
    }
    await coord.whenIdle();
    expect(coord.counters()).toMatchObject({ stalledGroups: 1, stalledEpisodes: 2 });
    expect(warnings.some((w) => w.includes("dropped group smoke/ta (2 of 3 episodes"))).toBe(true);
    expect(coord.canSchedule()).toBe(true);
    // room again: a complete group trains
    for (const [i, reward] of [[1, 0], [2, 1], [3, 1]] as const) {
      begin(`tc-${i}`, "tc");
      store.end(`tc-${i}`, { rewards: { a: reward } });
    }
    await coord.whenIdle();
    expect(reports.map((r) => r.outcome)).toEqual(["trained"]);
    await coord.stop();
    store.close();
  });
});
