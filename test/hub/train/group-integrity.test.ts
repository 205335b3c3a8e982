import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { runTraining } from "../../../hub/train/run-training.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";
import { quiet, smallQuickstart } from "./helpers.ts";

afterAll(removeTempDirs);

interface Trained {
  step: number;
  episode_id: string;
  env: string;
  task_id: string;
  metadata: string;
}

// Regression (issue 18, item 1): arith and countdown both name tasks `train-<seed>-<i>`; grouped by task
// id alone, a run mixing them trained groups of 2 arith + 2 countdown episodes.
describe("agentjet train: arith + countdown in one run", () => {
  it("trains every group as the scheduler formed it: one environment, one task, groupSize episodes", { timeout: 240_000 }, async () => {
    const config = await smallQuickstart({ steps: 3, checkpointEvery: 100, batchTasks: 4, groupSize: 4, concurrency: 16, filterEqualRewards: false });
    const arith = config.environments[0]!;
    config.environments = [arith, { ...arith, name: "countdown" }];
    const project = tempDir("train-groups");
    const runDir = join(project, "run");
    const result = await runTraining({ config, runDir, projectDir: project, port: 0, progress: quiet });
    expect(result.reason).toBe("done");

    const db = new Database(join(runDir, "run.db"), { readonly: true });
    const rows = db
      .prepare(
        `SELECT t.step, t.episode_id, e.env, e.task_id, e.metadata FROM trained_episodes t JOIN episodes e ON e.episode_id = t.episode_id`,
      )
      .all() as Trained[];
    db.close();
    expect(new Set(rows.map((r) => r.step))).toEqual(new Set([1, 2, 3]));
    const groups = new Map<string, Trained[]>();
    for (const r of rows) {
      const groupId = (JSON.parse(r.metadata) as { groupId?: string }).groupId;
      expect(groupId).toBeTypeOf("string");
      const list = groups.get(groupId!) ?? [];
      list.push(r);
      groups.set(groupId!, list);
    }
    expect(groups.size).toBe(3 * 4);
    for (const [groupId, members] of groups) {
      expect(members, groupId).toHaveLength(4);
      expect(new Set(members.map((m) => `${m.step} ${m.env} ${m.task_id}`)).size, groupId).toBe(1);
    }
    expect(new Set(rows.map((r) => r.env))).toEqual(new Set(["arith", "countdown"]));
  });
});
