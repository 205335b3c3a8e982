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
});
