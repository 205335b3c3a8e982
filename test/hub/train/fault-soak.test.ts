import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { buildReport } from "../../../hub/report/build-report.ts";
import { runTraining } from "../../../hub/train/run-training.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";
import { quiet, readEvents, smallQuickstart } from "./helpers.ts";

afterAll(removeTempDirs);

const FIXTURE = join(import.meta.dirname, "fixtures", "faulty-soak");
const ENV_FAILURES = ["crash", "timeout", "oom", "protocol"];

interface EpisodeRow {
  episode_id: string;
  env: string;
  state: string;
  rewards: string | null;
  metadata: string;
  abort_reason: string | null;
}

/**
 * A plugin that throws, hangs, runs out of memory, returns garbage, an out-of-range reward or no reward
 * (by episode seed, so its retries fail too), mixed with a healthy arith: nothing bad is trained, no
 * episode is stranded in the pool, and the report's failure counts are run.db's.
 */
describe("fault soak: a misbehaving plugin beside a healthy one", () => {
  it("trains zero bad samples, strands zero episodes, and reports run.db's failure counts", { timeout: 300_000 }, async () => {
    const config = await smallQuickstart({ steps: 4, checkpointEvery: 100, batchTasks: 4, groupSize: 2, concurrency: 8, filterEqualRewards: false });
    config.batching.infraRetries = 1;
    const arith = config.environments[0]!;
    config.environments = [arith, { ...arith, name: "faulty-soak", path: FIXTURE }];
    const project = tempDir("train-soak");
    const runDir = join(project, "run");
    const result = await runTraining({ config, runDir, projectDir: project, port: 0, progress: quiet });
    expect(result.reason).toBe("done");

    const db = new Database(join(runDir, "run.db"), { readonly: true });
    const episodes = db.prepare("SELECT episode_id, env, state, rewards, metadata, abort_reason FROM episodes WHERE eval = 0").all() as EpisodeRow[];
    const trained = new Set((db.prepare("SELECT episode_id FROM trained_episodes").all() as Array<{ episode_id: string }>).map((r) => r.episode_id));
    const pooled = (db.prepare("SELECT DISTINCT episode_id FROM training_pool_units").all() as Array<{ episode_id: string }>).map((r) => r.episode_id);
    db.close();
    const byId = new Map(episodes.map((e) => [e.episode_id, e]));
    const groupOf = (e: EpisodeRow) => `${e.env}/${(JSON.parse(e.metadata) as { groupId: string }).groupId}`;
    const kindOf = (e: EpisodeRow) => (e.abort_reason ? (JSON.parse(e.abort_reason) as { kind: string }).kind : null);

    // Every fault happened, as the kind it is.
    const faulty = episodes.filter((e) => e.env === "faulty-soak" && e.state === "aborted");
    const kinds = new Set(faulty.map(kindOf));
    for (const k of ENV_FAILURES) expect([...kinds], k).toContain(k);

    // Zero bad samples: every trained episode ended with a finite in-range reward, none of a faulty seed.
    expect(trained.size).toBeGreaterThan(0);
    for (const id of trained) {
      const e = byId.get(id)!;
      expect(e.state, id).toBe("ended");
      const r = (JSON.parse(e.rewards!) as Record<string, number>).solver!;
      expect(r >= 0 && r <= 1, `${id}: ${r}`).toBe(true);
      if (e.env === "faulty-soak") expect((JSON.parse(e.metadata) as { fault?: string }).fault, id).toBe("none");
    }

    // Zero stranded: no episode of a group that failed stays pooled (or was trained). A group failed when
    // one member (episode ids `<slot>-t<try>`) failed infraRetries + 1 times.
    const triesFailed = new Map<string, number>();
    for (const e of faulty) {
      if (!ENV_FAILURES.includes(kindOf(e)!)) continue;
      const slot = e.episode_id.replace(/-t\d+$/, "");
      triesFailed.set(slot, (triesFailed.get(slot) ?? 0) + 1);
    }
    const failedGroups = new Set(
      faulty.filter((e) => (triesFailed.get(e.episode_id.replace(/-t\d+$/, "")) ?? 0) > config.batching.infraRetries).map(groupOf),
    );
    expect(failedGroups.size).toBeGreaterThan(0);
    for (const id of pooled) expect(failedGroups.has(groupOf(byId.get(id)!)), id).toBe(false);
    for (const id of trained) expect(failedGroups.has(groupOf(byId.get(id)!)), id).toBe(false);

    // The report's counts are run.db's.
    const summary = await buildReport(runDir);
    const reported = summary.failures;
    const inDb: Record<string, number> = {};
    for (const e of episodes) {
      const k = kindOf(e);
      if (k && ENV_FAILURES.includes(k)) inDb[k] = (inDb[k] ?? 0) + 1;
    }
    expect(Object.fromEntries(ENV_FAILURES.map((k) => [k, reported[k] ?? 0]))).toEqual(Object.fromEntries(ENV_FAILURES.map((k) => [k, inDb[k] ?? 0])));
    const allInDb: Record<string, number> = {};
    for (const e of episodes) {
      const k = kindOf(e);
      if (k) allInDb[k] = (allInDb[k] ?? 0) + 1;
    }
    // Every abort kind run.db holds is counted by the report as it is, but the two that are no failure of
    // their own: a failed group's running siblings (`group-failed`) and the run's stop (`cancelled`).
    const { "group-failed": _siblings, cancelled: _stop, ...failuresInDb } = allInDb;
    expect(reported).toEqual(failuresInDb);
    expect(summary.failedGroups.groups).toBe(failedGroups.size);
    expect(readEvents(runDir).at(-1)).toMatchObject({ type: "end", reason: "done" });
  });
});
