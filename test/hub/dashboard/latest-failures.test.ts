import { describe, expect, it } from "vitest";
import { latestFailures } from "../../../hub/dashboard/episode-query.ts";
import { openRunDb } from "../../../server/db/run-db.ts";
import { createEpisodeStore } from "../../../server/episodes/episode-store.ts";

// Regression: the panel listed every aborted episode, and the scheduler's cancellations at the end of a
// run (episodes it never ran) filled it, pushing the real failures out of its 20 rows.
describe("the dashboard's failures panel", () => {
  it("lists aborted episodes newest first, leaving out those the scheduler cancelled before they ran", () => {
    const db = openRunDb(":memory:");
    let t = 1_000;
    const store = createEpisodeStore({ db, policies: ["main"], reclaimTimer: false, now: () => (t += 1_000), keySecret: "k" });
    const abort = (id: string, kind: string, message: string) => {
      store.register({ episodeId: id, taskId: `task-${id}`, env: "arith", agents: { a: { kind: "policy", target: "main" } } });
      store.abort(id, { kind, message });
    };
    abort("e1", "crash", "boom; stderr: Traceback line 1");
    abort("e2", "timeout", "step ran past 30000 ms");
    for (let i = 0; i < 5; i++) abort(`c${i}`, "cancelled", "the scheduler is closing");
    const failures = latestFailures(db, 3);
    expect(failures.map((f) => [f.episodeId, f.failure?.kind])).toEqual([
      ["e2", "timeout"],
      ["e1", "crash"],
    ]);
    expect(failures[1]).toMatchObject({ failure: { message: "boom" }, stderrTail: "Traceback line 1" });
    store.close();
  });
});
