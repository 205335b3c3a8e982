import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { EpisodeUnit } from "../../../server/training/episode-samples.ts";
import { SamplePool } from "../../../server/training/sample-pool.ts";
import type { Sample } from "../../../server/training/sample.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function openDb(): { path: string; db: Database.Database } {
  const dir = mkdtempSync(join(tmpdir(), "aj-pool-"));
  dirs.push(dir);
  const path = join(dir, "run.db");
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  return { path, db };
}

function unit(policy: string, episodeId: string, agentId: string, reward: number, n = 1): EpisodeUnit {
  const samples: Sample[] = Array.from({ length: n }, (_, i) => ({
    sampleId: `${episodeId}:${agentId}:${i}`, episodeId, agentId, policy, taskId: "t1", env: "smoke", group: "smoke/g1",
    tokenIds: [1, 2, 3 + i, 70_000], lossMask: [0, 0, 1, 1], logprobs: [0, 0, -0.1 * (i + 1), -1e-17], versions: [-1, -1, 3, 4],
    reward, advantage: 0, weight: 1, calls: 2,
  }));
  return { policy, episodeId, agentId, taskId: "t1", env: "smoke", group: "smoke/g1", clientId: "c1", reward, samples };
}

describe("SamplePool", () => {
  it("survives a restart with every sample intact, per policy", () => {
    const { path, db } = openDb();
    const pool = new SamplePool(db);
    pool.add([unit("main", "e1", "a", 1, 2), unit("other", "e1", "b", 0)]);
    pool.add([unit("main", "e2", "a", 0.5)]);
    const before = pool.loadSamples(pool.entries("main"));
    db.close();

    const again = new SamplePool(new Database(path));
    expect(again.entries("main").map((e) => [e.episodeId, e.reward, e.sampleCount])).toEqual([["e1", 1, 2], ["e2", 0.5, 1]]);
    expect(again.episodeCount("other")).toBe(1);
    const after = again.loadSamples(again.entries("main"));
    expect(after).toEqual(before);
    expect(after[0]).toMatchObject({ tokenIds: [1, 2, 3, 70_000], logprobs: [0, 0, -0.1, -1e-17], versions: [-1, -1, 3, 4], calls: 2 });
  });

  it("deletes whole episodes of one policy and never doubles a re-delivered episode", () => {
    const { db } = openDb();
    const pool = new SamplePool(db);
    pool.add([unit("main", "e1", "a", 1, 3), unit("other", "e1", "a", 1)]);
    pool.add([unit("main", "e1", "a", 1)]);
    expect(pool.entries("main")).toHaveLength(1);
    expect(db.prepare("SELECT COUNT(*) AS n FROM training_pool_samples").get()).toEqual({ n: 2 });
    pool.remove("main", ["e1"]);
    expect(pool.entries("main")).toHaveLength(0);
    expect(pool.entries("other")).toHaveLength(1);
    expect(db.prepare("SELECT COUNT(*) AS n FROM training_pool_samples").get()).toEqual({ n: 1 });
  });

  it("clears every episode of one policy, rows included, and leaves the others", () => {
    const { db } = openDb();
    const pool = new SamplePool(db);
    pool.add([unit("main", "e1", "a", 1), unit("main", "e1", "b", 0), unit("main", "e2", "a", 1), unit("other", "e1", "a", 1)]);
    pool.clear("main");
    expect(pool.entries("main")).toHaveLength(0);
    expect(pool.entries("other")).toHaveLength(1);
    expect(db.prepare("SELECT COUNT(*) AS n FROM training_pool_samples").get()).toEqual({ n: 1 });
  });

  it("refuses a corrupt row with a coded error", () => {
    const { db } = openDb();
    const pool = new SamplePool(db);
    pool.add([unit("main", "e1", "a", 1)]);
    db.prepare("UPDATE training_pool_samples SET loss_mask = ?").run(Buffer.from([1]));
    expect(() => pool.loadSamples(pool.entries("main"))).toThrow(expect.objectContaining({ code: "AJ_ERR_POOL_CORRUPT" }));
  });
});
