import { describe, expect, it } from "vitest";
import { openRunDb } from "../../../server/db/run-db.ts";
import { TrainingCoordinator, type CoordinatorOptions, type StepReport } from "../../../server/training/coordinator.ts";
import { SamplePool } from "../../../server/training/sample-pool.ts";
import {
  createTinyEngine,
  InMemoryEpisodeStore,
  manualClock,
  recordBatches,
  rewardedEpisode,
  trainingConfig,
} from "./helpers/training-parts.ts";

function setup(over: Partial<CoordinatorOptions> = {}) {
  const store = new InMemoryEpisodeStore();
  const engine = createTinyEngine();
  const { trainer, batches } = recordBatches(engine);
  const pool = new SamplePool(openRunDb(":memory:"));
  const reports: StepReport[] = [];
  const warnings: string[] = [];
  const clock = manualClock(1_000_000);
  const coord = new TrainingCoordinator({
    store,
    engines: { main: trainer },
    pool,
    config: trainingConfig(),
    now: clock.now,
    sleep: clock.sleep,
    tickMs: 0,
    onStep: (r) => reports.push(r),
    onWarning: (w) => warnings.push(w),
    ...over,
  });
  coord.start();
  /** A tick of the coordinator, then whatever step it started, done. */
  const tick = async () => {
    coord.tick();
    await coord.whenIdle();
  };
  return { store, engine, batches, pool, reports, warnings, coord, tick, advance: clock.advance };
}

describe("TrainingCoordinator", () => {
  it("trains when `tasks` is ready: pauses claims, drains, filters, scores, bumps the version, resumes", async () => {
    const { store, batches, pool, reports, coord } = setup();
    for (const id of ["e1", "e2", "e3", "e4", "e5"]) store.claim(id);
    store.end(rewardedEpisode("e1", "t1", 1));
    store.end(rewardedEpisode("e2", "t2", 1));
    store.end(rewardedEpisode("e3", "t1", 0));
    expect(coord.phase()).toBe("rolling");
    store.end(rewardedEpisode("e4", "t2", 1)); // t1 and t2 complete: sync starts, e5 still in flight
    expect(coord.phase()).toBe("draining");
    expect(coord.canSchedule()).toBe(false);
    expect(store.claim("e6")).toBe(false);
    await new Promise((r) => setImmediate(r));
    expect(batches).toHaveLength(0);
    store.end(rewardedEpisode("e5", "t3", 1));
    await coord.whenIdle();

    expect(store.pauses).toEqual(["pause", "resume"]);
    expect(reports).toHaveLength(1);
    const r = reports[0]!;
    expect(r).toMatchObject({
      policy: "main", step: 1, outcome: "trained", versionBefore: 0, versionAfter: 1, episodes: 2, samples: 2, groups: 1,
      droppedGroups: [{ taskId: "t2", episodes: 2, reward: 1 }], abandoned: 0, sampleVersions: { min: 0, max: 0 },
    });
    const a = 0.5 / (Math.SQRT1_2 + 1e-6);
    expect(batches[0]!.samples.map((s) => s.advantage)).toEqual([a, -a]);
    expect(r.metrics?.version).toBe(1);
    // t3's episode (ended while draining) stays pooled for the next batch.
    expect(pool.entries("main").map((e) => e.episodeId)).toEqual(["e5"]);
    expect(coord.counters()).toMatchObject({ episodesPooled: 5, droppedGroups: 1, droppedEpisodes: 2 });
    expect(coord.canSchedule()).toBe(true);
  });

  // Regression (issue 18, item 1): the pool grouped by task id alone, so arith and countdown episodes of
  // `train-0-32` formed one group, and a failed group's leftovers joined a later group of that task.
  it("groups by the group the episode was formed in, scoped by environment, never by a bare task id", async () => {
    const { store, batches, reports, pool, coord } = setup();
    const ids = ["a1", "c1", "a2", "c2", "x1"];
    for (const id of ids) store.claim(id);
    const arith = (id: string, group: string, r: number) => rewardedEpisode(id, "train-0-32", r, { env: "arith", groupId: group });
    const countdown = (id: string, group: string, r: number) => rewardedEpisode(id, "train-0-32", r, { env: "countdown", groupId: group });
    // One episode each of arith group 0:0 and countdown group 0:1, the same task id: no group is complete.
    store.end(arith("a1", "0:0", 1));
    store.end(countdown("c1", "0:1", 0));
    // A leftover of a failed arith group (1:0) of the same task: it must not complete group 0:0.
    store.end(arith("x1", "1:0", 0));
    await new Promise((r) => setImmediate(r));
    expect(batches).toHaveLength(0);
    store.end(arith("a2", "0:0", 0));
    store.end(countdown("c2", "0:1", 1));
    await new Promise((r) => setImmediate(r));
    await coord.whenIdle();
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ groups: 2, episodes: 4, groupsPerEnv: { arith: 1, countdown: 1 } });
    expect(new Set(reports[0]!.episodeIds)).toEqual(new Set(["a1", "a2", "c1", "c2"]));
    // Advantages within each group: +a for the winner, -a for the loser, in both environments.
    const a = 0.5 / (Math.SQRT1_2 + 1e-6);
    expect(batches[0]!.samples.map((s) => s.advantage).sort()).toEqual([-a, -a, a, a].sort());
    expect(pool.entries("main").map((e) => e.episodeId)).toEqual(["x1"]);
  });

  // Regression (issue 18, item 2): a failed group's ended episodes stayed in the pool for good (51 stranded
  // units at the end of one run).
  it("drops a failed group's ended episodes from the pool, counts them, and drops one that ends later", async () => {
    const { store, pool, coord, batches } = setup();
    for (const id of ["g1", "g2", "g3", "o1"]) store.claim(id);
    store.end(rewardedEpisode("g1", "t1", 1, { env: "arith", groupId: "3:1" }));
    store.end(rewardedEpisode("g2", "t1", 0, { env: "arith", groupId: "3:1" }));
    store.end(rewardedEpisode("o1", "t1", 0, { env: "countdown", groupId: "3:1" }));
    expect(coord.discardGroup("arith", "3:1")).toBe(2);
    expect(pool.entries("main").map((e) => e.episodeId)).toEqual(["o1"]);
    store.end(rewardedEpisode("g3", "t1", 1, { env: "arith", groupId: "3:1" }));
    expect(pool.entries("main").map((e) => e.episodeId)).toEqual(["o1"]);
    expect(coord.discardGroup("arith", "3:1")).toBe(0);
    expect(coord.counters()).toMatchObject({ failedGroups: 1, failedGroupEpisodes: 3 });
    await coord.whenIdle();
    expect(batches).toHaveLength(0);
  });

  it("abandons in-flight episodes after syncTimeoutS and ignores their late end", async () => {
    const { store, reports, coord } = setup();
    store.claim("slow");
    for (const [id, task, reward] of [["e1", "t1", 1], ["e2", "t1", 0], ["e3", "t2", 0], ["e4", "t2", 1]] as const) {
      store.claim(id);
      store.end(rewardedEpisode(id, task, reward));
    }
    await coord.whenIdle();
    expect(store.abandoned).toEqual(["slow"]);
    expect(reports[0]).toMatchObject({ outcome: "trained", abandoned: 1, groups: 2, samples: 4 });
    store.end(rewardedEpisode("slow", "t3", 1));
    expect(coord.counters()).toMatchObject({ abandonedByDrain: 1, abandonedEnded: 1, episodesPooled: 4 });
  });

  it("masks out infrastructure failures and evaluation episodes: never pooled, never scored 0", async () => {
    const { store, reports, pool, coord } = setup();
    store.end(rewardedEpisode("x1", "t1", 0, { outcome: { kind: "infra-failed", reason: "sandbox_crash" } }));
    store.end(rewardedEpisode("x2", "t1", 0, { evaluation: true }));
    store.end(rewardedEpisode("e1", "t1", 1));
    store.end(rewardedEpisode("e2", "t2", 0));
    store.end(rewardedEpisode("e3", "t2", 1));
    await coord.whenIdle();
    expect(reports).toHaveLength(0);
    expect(pool.entries("main").map((e) => e.episodeId)).toEqual(["e1", "e2", "e3"]);
    store.end(rewardedEpisode("e4", "t1", 0.5));
    await coord.whenIdle();
    expect(reports[0]).toMatchObject({ outcome: "trained", episodes: 4, samples: 4 });
    expect(coord.counters()).toMatchObject({ infraFailed: 1, evaluation: 1 });
  });

  it("warns once at maxCachedEpisodes and stops scheduling until a batch trains", async () => {
    const { store, reports, warnings, coord } = setup({
      config: trainingConfig({ strategy: "all-clients", maxCachedEpisodes: 3 }),
    });
    store.end(rewardedEpisode("e1", "t1", 1, { clientId: "c1" }));
    store.end(rewardedEpisode("e2", "t1", 0, { clientId: "c2" }));
    expect(coord.canSchedule()).toBe(true);
    store.end(rewardedEpisode("e3", "t2", 1, { clientId: "c2" }));
    store.end(rewardedEpisode("e4", "t2", 0, { clientId: "c2" }));
    expect(coord.canSchedule()).toBe(false);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/policy 'main' holds 3 episodes, at batching.maxCachedEpisodes \(3\)/);
    coord.agreeSync("c1");
    await coord.whenIdle();
    expect(reports).toHaveLength(0);
    coord.agreeSync("c2");
    await coord.whenIdle();
    expect(reports[0]).toMatchObject({ outcome: "trained", episodes: 4, groups: 2 });
    expect(coord.canSchedule()).toBe(true);
  });

  it("lets an idle client drop out of all-clients on a tick", async () => {
    const { store, reports, coord, tick, advance } = setup({ config: trainingConfig({ strategy: "all-clients", clientIdleS: 10 }) });
    store.end(rewardedEpisode("e1", "t1", 1, { clientId: "c1" }));
    store.end(rewardedEpisode("e2", "t1", 0, { clientId: "c2" }));
    coord.agreeSync("c1");
    advance(5_000);
    coord.touchClient("c1");
    await tick();
    expect(reports).toHaveLength(0);
    advance(5_001);
    await tick();
    expect(reports[0]).toMatchObject({ outcome: "trained", episodes: 2 });
  });

  it("keeps the batch pooled when the step fails, and resumes claims", async () => {
    const errors: unknown[] = [];
    const { store, reports, pool, coord, tick, advance } = setup({ onError: (e) => errors.push(e) });
    const bad = rewardedEpisode("e1", "t1", 1);
    bad.calls[1]!.outputIds[0] = 10_000; // outside the vocabulary: the engine refuses the batch
    store.end(bad);
    for (const [id, task, reward] of [["e2", "t1", 0], ["e3", "t2", 0], ["e4", "t2", 1]] as const) store.end(rewardedEpisode(id, task, reward));
    await coord.whenIdle();
    expect(reports[0]).toMatchObject({ outcome: "failed", versionAfter: 0 });
    expect(errors).toHaveLength(1);
    expect(store.pauses).toEqual(["pause", "resume"]);
    expect(pool.episodeCount("main")).toBe(4);
    await tick();
    expect(reports).toHaveLength(1);
    advance(30_000);
    await tick();
    expect(reports.map((r) => r.outcome)).toEqual(["failed", "failed"]);
  });

  it("records the generating version on every sample across steps", async () => {
    const { store, batches, reports, coord } = setup({ config: trainingConfig({ strategy: "episodes", batchTasks: 1 }) });
    store.end(rewardedEpisode("e1", "t1", 1));
    store.end(rewardedEpisode("e2", "t1", 0));
    await coord.whenIdle();
    store.end(rewardedEpisode("e3", "t1", 1, { version: 1 }));
    store.end(rewardedEpisode("e4", "t1", 0, { version: 0 }));
    await coord.whenIdle();
    expect(reports.map((r) => [r.versionBefore, r.versionAfter, r.sampleVersions.min, r.sampleVersions.max])).toEqual([
      [0, 1, 0, 0],
      [1, 2, 0, 1],
    ]);
    expect(batches).toHaveLength(2);
  });
});
