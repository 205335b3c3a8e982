import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resumedSchedulerState } from "../../../hub/run/open-run.ts";
import { groupsTrainedBy, TrainedLedger } from "../../../hub/train/trained-ledger.ts";
import { openRunDb } from "../../../server/db/run-db.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";

afterAll(removeTempDirs);

const scheduler = { version: 1 as const, nextBatch: 2, streams: {}, ledger: {}, evalRuns: 0, doneGroups: ["2:0", "2:1"], partialEpisodes: [] };

// Regression (a full-suite run of crash-resume.test.ts): a training step takes complete groups as they
// arrive, so step 2 trained group 2:0 of scheduler batch 2 while 2:1 and 2:2 still ran. Resumed from
// step 2's checkpoint after a crash, the run dropped every complete group of that batch and played 2:0
// again: the final weights' lineage trained it twice (steps 2 and 3).
describe("resuming after a crash from a periodic checkpoint", () => {
  it("keeps as done the complete groups the checkpoint's weights trained, and plays the untrained ones again", () => {
    const path = join(tempDir("resume-groups"), "run.db");
    const db = openRunDb(path);
    const insert = db.prepare("INSERT INTO episodes (episode_id, task_id, env, state, agents, attempt, eval, created_at, metadata) VALUES (?, 't', 'arith', 'ended', '{}', 0, 0, 0, ?)");
    for (const [id, group] of [["a", "1:0"], ["b", "2:0"], ["c", "2:1"]] as const) insert.run(id, JSON.stringify({ groupId: group }));
    const ledger = new TrainedLedger(db);
    ledger.record("main", 1, ["a"]);
    ledger.record("main", 2, ["b"]);
    ledger.record("main", 3, ["c"]);
    db.close();

    const trained = groupsTrainedBy(path, 2);
    expect([...trained].sort()).toEqual(["1:0", "2:0"]);
    expect(resumedSchedulerState({ final: false, scheduler }, trained).doneGroups).toEqual(["2:0"]);
    expect(resumedSchedulerState({ final: true, scheduler }, trained).doneGroups).toEqual(["2:0", "2:1"]);
    expect(groupsTrainedBy(join(tempDir("resume-none"), "run.db"), 2).size).toBe(0);
  });
});
