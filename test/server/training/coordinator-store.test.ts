import { describe, expect, it } from "vitest";
import { openRunDb } from "../../../server/db/run-db.ts";
import { createEpisodeStore } from "../../../server/episodes/episode-store.ts";
import { TrainingCoordinator, type StepReport } from "../../../server/training/coordinator.ts";
import { SamplePool } from "../../../server/training/sample-pool.ts";
import { createEpisodeStorePort } from "../../../server/episodes/episode-store-port.ts";
import { createTinyEngine, manualClock, rewardedEpisode, trainingConfig } from "./helpers/training-parts.ts";

describe("TrainingCoordinator on the server's episode store", () => {
  it("pools ended episodes, pauses real claims while it trains, and abandons a stuck episode", async () => {
    const db = openRunDb(":memory:");
    const clock = manualClock(1_000);
    const store = createEpisodeStore({ db, policies: ["main"], reclaimTimer: false, now: clock.now, keySecret: "k" });
    const engine = createTinyEngine();
    const reports: StepReport[] = [];
    const coord = new TrainingCoordinator({
      store: createEpisodeStorePort(store),
      engines: { main: engine },
      pool: new SamplePool(db),
      config: trainingConfig({ batchTasks: 1 }, { syncTimeoutS: 1 }),
      now: clock.now,
      sleep: clock.sleep,
      tickMs: 0,
      onStep: (r) => reports.push(r),
    });
    coord.start();
    const run = (id: string, reward: number | null) => {
      store.register({ episodeId: id, taskId: "t1", env: "smoke", agents: { a: { kind: "policy", target: "main" } } });
      expect(store.claim({ episodeId: id, clientId: "c1" }).kind).toBe("claimed");
      for (const c of rewardedEpisode(id, "t1", 0).calls) store.tracker.record({ ...c, trainable: true });
      if (reward !== null) store.end(id, { rewards: { a: reward } });
    };
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

  // Regression: an ended episode whose agent of a trained policy made no call (a game over before its seat
  // moved) or only overflowed calls pooled nothing, so its group never reached groupSize and the group's
  // other episodes waited in the pool for good (a tic-tac-toe run with separate policies hung at the cap).
  it("an episode whose policy agent made no trainable call counts in its group, with no samples and no say in the signal", async () => {
    const db = openRunDb(":memory:");
    const clock = manualClock(1_000);
    const store = createEpisodeStore({ db, policies: ["main"], reclaimTimer: false, now: clock.now, keySecret: "k" });
    const reports: StepReport[] = [];
    const coord = new TrainingCoordinator({
      store: createEpisodeStorePort(store),
      engines: { main: createTinyEngine() },
      pool: new SamplePool(db),
      config: trainingConfig({ batchTasks: 2, groupSize: 3 }),
      now: clock.now,
      sleep: clock.sleep,
      tickMs: 0,
      onStep: (r) => reports.push(r),
    });
    coord.start();
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
    const db = openRunDb(":memory:");
    const clock = manualClock(1_000);
    const store = createEpisodeStore({ db, policies: ["main"], reclaimTimer: false, now: clock.now, keySecret: "k" });
    const reports: StepReport[] = [];
    const coord = new TrainingCoordinator({
      store: createEpisodeStorePort(store),
      engines: { main: createTinyEngine() },
      pool: new SamplePool(db),
      config: trainingConfig({ batchTasks: 1, groupSize: 3 }),
      now: clock.now,
      sleep: clock.sleep,
      tickMs: 0,
      onStep: (r) => reports.push(r),
    });
    coord.start();
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
});
