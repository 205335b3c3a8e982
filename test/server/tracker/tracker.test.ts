import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openRunDb } from "../../../server/db/run-db.ts";
import { createTracker, type TrackedCall } from "../../../server/tracker/tracker.ts";
import { trackedCall } from "../helpers/tracked-call.ts";

function call(episodeId: string, seq: number): TrackedCall {
  return trackedCall({ callId: `${episodeId}-${seq}`, episodeId, seq, outputText: `ok ${seq}` });
}

describe("call tracker: writes off the request path, nothing lost", () => {
  it("keeps recorded calls in memory and writes them in a batch, at once when the episode ends", () => {
    const db = openRunDb(":memory:");
    const tracker = createTracker(db);
    const rows = (id: string) => (db.prepare("SELECT seq FROM calls WHERE episode_id = ? ORDER BY seq").all(id) as Array<{ seq: number }>).map((r) => r.seq);
    for (let i = 0; i < 3; i++) tracker.record(call("e1", i));
    tracker.record(call("e2", 0));
    // recording wrote nothing yet: the live episode is read from memory
    expect(rows("e1")).toEqual([]);
    expect(tracker.callsOf("e1").map((c) => c.seq)).toEqual([0, 1, 2]);
    expect(tracker.generationsOf("e1", "solver").get("ok 2")).toEqual([3, 4, 5]);
    // the episode's end writes the batch (every pending call, of any episode) before it returns
    tracker.release("e1");
    expect(rows("e1")).toEqual([0, 1, 2]);
    expect(rows("e2")).toEqual([0]);
    // a released episode is read back from the database, pending calls first
    tracker.record(call("e3", 0));
    tracker.release("e3");
    expect(tracker.callsOf("e3").map((c) => c.outputIds)).toEqual([[4, 5]]);
    db.close();
  });

  it("writes what is pending on flush (the store's close) and on a full batch", () => {
    const db = openRunDb(":memory:");
    const tracker = createTracker(db);
    const count = () => (db.prepare("SELECT COUNT(*) AS n FROM calls").get() as { n: number }).n;
    tracker.record(call("e1", 0));
    expect(count()).toBe(0);
    tracker.flush();
    expect(count()).toBe(1);
    for (let i = 1; i <= 511; i++) tracker.record(call("e1", i));
    expect(count()).toBe(1);
    tracker.record(call("e1", 512));
    expect(count()).toBe(513);
    db.close();
  });

  it("on a file, commits on the writer thread: the same rows, committed before release and flush return", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aj-tracker-"));
    try {
      const db = openRunDb(join(dir, "run.db"));
      const mem = openRunDb(":memory:");
      const tracker = createTracker(db);
      const reference = createTracker(mem);
      const rows = (d: typeof db) => d.prepare("SELECT * FROM calls ORDER BY episode_id, seq").all();
      for (let i = 0; i < 600; i++) {
        tracker.record(call("e1", i));
        reference.record(call("e1", i));
      }
      tracker.record(call("e2", 0));
      reference.record(call("e2", 0));
      // a full batch went to the thread: not committed on the event loop's turn
      expect((db.prepare("SELECT COUNT(*) AS n FROM calls").get() as { n: number }).n).toBe(0);
      tracker.release("e1");
      reference.release("e1");
      expect(rows(db)).toEqual(rows(mem));
      expect(rows(db)).toHaveLength(601);
      // a released episode reads back from the database
      expect(tracker.callsOf("e1").map((c) => c.seq)).toEqual(Array.from({ length: 600 }, (_, i) => i));
      // the timer's batch, then close: committed
      tracker.record(call("e3", 0));
      await new Promise((resolve) => setTimeout(resolve, 250));
      tracker.close();
      expect((db.prepare("SELECT COUNT(*) AS n FROM calls WHERE episode_id = 'e3'").get() as { n: number }).n).toBe(1);
      db.close();
      mem.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("on a file, a long segment's ids (moved to the writer thread as one buffer) are recorded as the ids they are", () => {
    const dir = mkdtempSync(join(tmpdir(), "aj-tracker-"));
    try {
      const db = openRunDb(join(dir, "run.db"));
      const mem = openRunDb(":memory:");
      const long = Array.from({ length: 40_000 }, (_, i) => (i * 7919) % 151_000);
      const big = trackedCall({ callId: "big", episodeId: "e1", segments: [{ role: "user", text: "x".repeat(10), ids: long }, { role: "user", text: "hi", ids: [1, 2] }] });
      const tracker = createTracker(db);
      const reference = createTracker(mem);
      tracker.record(big);
      reference.record(big);
      tracker.release("e1");
      reference.release("e1");
      const rows = (d: typeof db) => d.prepare("SELECT * FROM calls").all();
      expect(rows(db)).toEqual(rows(mem));
      expect(tracker.callsOf("e1")[0]!.segments[0]!.ids).toEqual(long);
      // the call the tracker kept is untouched by the move
      expect(big.segments[0]!.ids).toHaveLength(40_000);
      tracker.close();
      db.close();
      mem.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a batch the writer thread cannot commit fails the next flush with the database's reason", () => {
    const dir = mkdtempSync(join(tmpdir(), "aj-tracker-"));
    try {
      const db = openRunDb(join(dir, "run.db"));
      const tracker = createTracker(db);
      tracker.record(call("e1", 0));
      tracker.flush();
      tracker.record(call("e1", 0)); // the same call id again
      expect(() => tracker.flush()).toThrow(/UNIQUE constraint failed/);
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
