import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openRunDb } from "../../../server/db/run-db.ts";
import { TrainingCoordinator, type StepReport, type TrainingConfig } from "../../../server/training/coordinator.ts";
import type { EndedEpisode } from "../../../server/training/ports.ts";
import { SamplePool } from "../../../server/training/sample-pool.ts";
import { createTinyEngine, InMemoryEpisodeStore, recordBatches, trainingConfig } from "./helpers/training-parts.ts";

const fixture = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", "replay-episodes.json"), "utf8")) as {
  episodes: EndedEpisode[];
};
const byId = new Map(fixture.episodes.map((e) => [e.episodeId, e]));
const episode = (id: string) => structuredClone(byId.get(id)!);

describe("replay of a recorded episode set through merge, pool, strategy, filter, advantages and train", () => {
  it("produces exactly the expected samples, masks, advantages and versions, across a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aj-replay-"));
    const dbPath = join(dir, "run.db");
    const engine = createTinyEngine();
    const { trainer, batches } = recordBatches(engine);
    const reports: StepReport[] = [];
    const config = (batchTasks: number): TrainingConfig => ({
      ...trainingConfig({ batchTasks, groupSize: 2 }),
      advantage: { eps: 1e-6, baseline: "episode", lossWeight: "per-episode" },
      merging: { match: "token", ignoreTools: true, overflow: "drop", prefixTree: true },
    });
    const start = (batchTasks: number) => {
      const db = openRunDb(dbPath);
      const store = new InMemoryEpisodeStore();
      const coord = new TrainingCoordinator({
        store, engines: { main: trainer }, pool: new SamplePool(db), config: config(batchTasks), tickMs: 0,
        onStep: (r) => reports.push(r),
      });
      coord.start();
      return { db, store, coord };
    };

    // Step 1: T1 (ep-1, ep-2) and T2 (ep-3, ep-4) complete; T2's rewards are equal; ep-6 crashed.
    const first = start(2);
    for (const id of ["ep-1", "ep-2", "ep-3", "ep-6", "ep-4"]) first.store.end(episode(id));
    await first.coord.whenIdle();
    const a1 = 0.5 / (Math.sqrt(0.5) + 1e-6);
    expect(batches).toHaveLength(1);
    expect(batches[0]!.samples).toEqual([
      {
        tokenIds: [1, 20, 2, 1, 30, 31, 2, 1, 10, 40, 41, 2, 5, 1, 32, 2, 1, 10, 42, 2],
        lossMask: [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1],
        logprobs: [0, 0, 0, 0, 0, 0, 0, 0, 0, -0.1, -0.2, -0.3, 0, 0, 0, 0, 0, 0, -0.4, -0.5],
        advantage: a1,
        weight: 1,
      },
      {
        tokenIds: [1, 20, 2, 1, 30, 31, 2, 1, 10, 43, 2],
        lossMask: [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1],
        logprobs: [0, 0, 0, 0, 0, 0, 0, 0, 0, -0.6, -0.7],
        advantage: -a1,
        weight: 0.5,
      },
      {
        tokenIds: [1, 20, 2, 1, 33, 2, 1, 10, 44, 2],
        lossMask: [0, 0, 0, 0, 0, 0, 0, 0, 1, 1],
        logprobs: [0, 0, 0, 0, 0, 0, 0, 0, -0.8, -0.9],
        advantage: -a1,
        weight: 0.5,
      },
    ]);
    expect(reports[0]).toMatchObject({
      step: 1, outcome: "trained", versionBefore: 0, versionAfter: 1, episodes: 2, samples: 3, groups: 1,
      droppedGroups: [{ taskId: "T2", episodes: 2, reward: 1 }], tokens: 41, lossTokens: 9,
      sampleVersions: { min: 0, max: 0 }, prefixTree: { sequences: 3, flatTokens: 41, treeTokens: 28 },
    });
    expect(reports[0]!.metrics).toMatchObject({ tokens: 9, version: 1 });
    expect(first.coord.counters()).toMatchObject({ episodesPooled: 4, infraFailed: 1, droppedGroups: 1, droppedEpisodes: 2 });
    expect(first.coord.counters().merge).toMatchObject({ calls: 6, timelines: 5 });

    // ep-5 and ep-7 end at version 1; one complete task is not yet a batch of two. The server restarts.
    first.store.end(episode("ep-5"));
    first.store.end(episode("ep-7"));
    await first.coord.stop();
    expect(reports).toHaveLength(1);
    first.db.close();

    // Step 2 after the restart (batchTasks 1): T3 from the pool on disk; ep-7's retried call is its own sample.
    const second = start(1);
    await second.coord.whenIdle();
    const a2 = 0.25 / (Math.sqrt(0.125) + 1e-6);
    expect(batches).toHaveLength(2);
    expect(batches[1]!.samples.map((s) => [s.tokenIds, s.lossMask, s.advantage, s.weight])).toEqual([
      [[1, 35, 2, 1, 10, 50, 51, 2], [0, 0, 0, 0, 0, 1, 1, 1], a2, 1],
      [[1, 35, 2, 1, 10, 45, 2], [0, 0, 0, 0, 0, 1, 1], -a2, 0.5],
      [[1, 35, 2, 1, 10, 46, 2], [0, 0, 0, 0, 0, 1, 1], -a2, 0.5],
    ]);
    expect(reports[1]).toMatchObject({
      step: 1, outcome: "trained", versionBefore: 1, versionAfter: 2, episodes: 2, samples: 3, groups: 1, droppedGroups: [],
      lossTokens: 7, sampleVersions: { min: 1, max: 1 }, prefixTree: { flatTokens: 22, treeTokens: 12 },
    });
    expect(engine.version()).toBe(2);
    await second.coord.stop();
    expect(new SamplePool(second.db).episodeCount("main")).toBe(0);
    second.db.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
