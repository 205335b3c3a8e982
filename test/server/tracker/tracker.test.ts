import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openRunDb, type RunDb } from "../../../server/db/run-db.ts";
import { createCallWriter } from "../../../server/tracker/call-writer.ts";
import { createTracker, type TrackedCall, type Tracker } from "../../../server/tracker/tracker.ts";
import { trackedCall } from "../helpers/tracked-call.ts";

function call(episodeId: string, seq: number): TrackedCall {
  return trackedCall({ callId: `${episodeId}-${seq}`, episodeId, seq, outputText: `ok ${seq}` });
}

/** Runs `test` with a fresh temporary folder, removed after. */
async function inTempDir(test: (dir: string) => void | Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "aj-tracker-"));
  try {
    await test(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A tracker on a file (its writer thread commits) and a reference tracker on an in-memory database (written in place). */
interface OnFileAndInMemory {
  db: RunDb;
  mem: RunDb;
  tracker: Tracker;
  reference: Tracker;
  /** Records the call in both. */
  record(c: TrackedCall): void;
  /** Releases the episode in both, once its calls are committed on the file. */
  release(episodeId: string): Promise<void>;
  flush(): void;
  /** Both databases' `calls` rows, in this order (an SQL `ORDER BY` clause, or none). */
  rows(orderBy?: string): { file: unknown[]; memory: unknown[] };
}

/** Runs `test` on a tracker on a file and its in-memory reference; then closes the tracker and both databases. */
function onFileAndInMemory(test: (t: OnFileAndInMemory) => void | Promise<void>): Promise<void> {
  return inTempDir(async (dir) => {
    const db = openRunDb(join(dir, "run.db"));
    const mem = openRunDb(":memory:");
    const tracker = createTracker(db);
    const reference = createTracker(mem);
    const rowsOf = (d: RunDb, orderBy: string) => d.prepare(`SELECT * FROM calls ${orderBy}`).all();
    await test({
      db,
      mem,
      tracker,
      reference,
      record(c) {
        tracker.record(c);
        reference.record(c);
      },
      async release(episodeId) {
        tracker.release(episodeId);
        reference.release(episodeId);
        await tracker.committed(episodeId);
      },
      flush() {
        tracker.flush();
        reference.flush();
      },
      rows: (orderBy = "") => ({ file: rowsOf(db, orderBy), memory: rowsOf(mem, orderBy) }),
    });
    tracker.close();
    db.close();
    mem.close();
  });
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

  it("on a file, commits on the writer thread: the same rows, committed before flush returns and before a release's `committed` resolves", () =>
    onFileAndInMemory(async ({ db, tracker, record, release, rows }) => {
      for (let i = 0; i < 600; i++) record(call("e1", i));
      record(call("e2", 0));
      // a full batch went to the thread: not committed on the event loop's turn
      expect((db.prepare("SELECT COUNT(*) AS n FROM calls").get() as { n: number }).n).toBe(0);
      await release("e1");
      const { file, memory } = rows("ORDER BY episode_id, seq");
      expect(file).toEqual(memory);
      expect(file).toHaveLength(601);
      // a released episode reads back from the database
      expect(tracker.callsOf("e1").map((c) => c.seq)).toEqual(Array.from({ length: 600 }, (_, i) => i));
      // the timer's batch, then close: committed
      tracker.record(call("e3", 0));
      await new Promise((resolve) => setTimeout(resolve, 250));
      tracker.close();
      expect((db.prepare("SELECT COUNT(*) AS n FROM calls WHERE episode_id = 'e3'").get() as { n: number }).n).toBe(1);
    }));

  it("on a file, an episode's release holds nothing up: its calls are committed soon after, read from memory until then, and `committed` waits for them", () =>
    inTempDir(async (dir) => {
      const db = openRunDb(join(dir, "run.db"));
      const tracker = createTracker(db);
      const count = (id: string) => (db.prepare("SELECT COUNT(*) AS n FROM calls WHERE episode_id = ?").get(id) as { n: number }).n;
      for (let i = 0; i < 3; i++) tracker.record(call("e1", i));
      tracker.record(call("e2", 0));
      tracker.release("e1");
      tracker.release("e1"); // twice is once
      // nothing written or waited for on the release's turn; the episode still reads (from memory)
      expect(count("e1")).toBe(0);
      expect(tracker.callsOf("e1").map((c) => c.seq)).toEqual([0, 1, 2]);
      let settled = false;
      const done = tracker.committed("e1").then(() => (settled = true));
      await Promise.resolve();
      expect(settled).toBe(false);
      await done;
      // the episode's end handed over what was pending, the other episode's call with its own
      expect(count("e1")).toBe(3);
      expect(count("e2")).toBe(1);
      // out of memory now: read back from the database
      expect(tracker.callsOf("e1").map((c) => c.outputText)).toEqual(["ok 0", "ok 1", "ok 2"]);
      await tracker.committed("e1");
      await tracker.committed("never-recorded");
      tracker.close();
      db.close();
    }));

  it("on a file, a release whose batch fails rejects `committed` with the failure, and the flush that follows reports it", () =>
    inTempDir(async (dir) => {
      const db = openRunDb(join(dir, "run.db"));
      const tracker = createTracker(db);
      tracker.record(call("e1", 0));
      tracker.flush();
      tracker.record(call("e2", 0));
      tracker.record({ ...call("e2", 1), callId: "e1-0" }); // a call id already written: the batch fails
      tracker.release("e2");
      await expect(tracker.committed("e2")).rejects.toThrow(/UNIQUE constraint failed/);
      expect(() => tracker.flush()).toThrow(/UNIQUE constraint failed/);
      expect(() => tracker.close()).toThrow(/UNIQUE constraint failed/);
      db.close();
    }));

  it("on a file, a long segment's ids (packed into the batch's moved Int32Array) are recorded as the ids they are", () =>
    onFileAndInMemory(async ({ tracker, record, release, rows }) => {
      const long = Array.from({ length: 40_000 }, (_, i) => (i * 7919) % 151_000);
      const big = trackedCall({ callId: "big", episodeId: "e1", segments: [{ role: "user", text: "x".repeat(10), ids: long }, { role: "user", text: "hi", ids: [1, 2] }] });
      record(big);
      await release("e1");
      const { file, memory } = rows();
      expect(file).toEqual(memory);
      expect(tracker.callsOf("e1")[0]!.segments[0]!.ids).toEqual(long);
      // the call the tracker kept is untouched by the move
      expect(big.segments[0]!.ids).toHaveLength(40_000);
    }));

  it("a segment whose ids are the encode thread's view of shared memory is recorded as the same ids in an array would be", () =>
    onFileAndInMemory(async ({ tracker, record, release, rows }) => {
      // past LARGE_CALL: packed a slice at a time, the long ids in chunks of their own
      const long = Array.from({ length: 150_000 }, (_, i) => (i * 7919) % 151_000);
      const shared = new Int32Array(new SharedArrayBuffer(4 * (long.length + 3)));
      shared.set([3, 9, 8, 7], 0);
      shared.set(long, 3);
      // views at an offset, as `unpackIds` hands them out: one packed whole, one a slice at a time
      const segments = (small: readonly number[] | Int32Array, large: readonly number[] | Int32Array) => [
        { role: "system" as const, text: "s", ids: small },
        { role: "user" as const, text: "x".repeat(10), ids: large },
      ];
      record(trackedCall({ callId: "view", episodeId: "e1", segments: segments(shared.subarray(1, 3), shared.subarray(3)) }));
      record(trackedCall({ callId: "array", episodeId: "e2", segments: segments([9, 8], long) }));
      await release("e1");
      await release("e2");
      const { file, memory } = rows("ORDER BY call_id");
      expect(file).toEqual(memory);
      const [array, view] = file as Array<{ segments: string }>;
      expect(view!.segments).toBe(array!.segments);
      expect((JSON.parse(view!.segments) as Array<{ ids: number[] }>)[1]!.ids).toEqual(long);
      expect(Array.from(tracker.callsOf("e1")[0]!.segments[1]!.ids)).toEqual(long);
    }));

  it("a batch the writer thread cannot commit fails the next flush with the database's reason", () =>
    inTempDir((dir) => {
      const db = openRunDb(join(dir, "run.db"));
      const tracker = createTracker(db);
      tracker.record(call("e1", 0));
      tracker.flush();
      tracker.record(call("e1", 0)); // the same call id again
      expect(() => tracker.flush()).toThrow(/UNIQUE constraint failed/);
      db.close();
    }));

  it("a batch that fails on the writer thread does not throw from the batch timer (the process would crash): it is said once, and the next flush reports it", () =>
    inTempDir(async (dir) => {
      const db = openRunDb(join(dir, "run.db"));
      const said: unknown[] = [];
      const tracker = createTracker(db, (err) => said.push(err));
      const uncaught: unknown[] = [];
      const onUncaught = (err: unknown) => uncaught.push(err);
      process.prependListener("uncaughtException", onUncaught);
      try {
        tracker.record(call("e1", 0));
        tracker.flush();
        tracker.record(call("e1", 0)); // the same call id again: its timer's batch fails on the thread
        await new Promise((resolve) => setTimeout(resolve, 300));
        tracker.record(call("e1", 1)); // handed over by the next timer, which finds the failure
        await new Promise((resolve) => setTimeout(resolve, 300));
        tracker.record(call("e1", 2));
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(uncaught).toEqual([]);
        expect(said).toHaveLength(1);
        expect(String(said[0])).toMatch(/UNIQUE constraint failed/);
        expect(() => tracker.flush()).toThrow(/UNIQUE constraint failed/);
      } finally {
        process.off("uncaughtException", onUncaught);
        db.close();
      }
    }));

  it("on a file, packed batches record exactly what the in-memory writer records: numbers no typed array holds, any text", () =>
    onFileAndInMemory(async ({ tracker, record, release, rows }) => {
      const odd = [
        trackedCall({ callId: "a", episodeId: "e1", headerIds: [1.5, 2], outputIds: [2 ** 31, -1, 0], outputLogprobs: [Number.NaN, Number.NEGATIVE_INFINITY, -0, 1e-300, -1e21] }),
        trackedCall({ callId: "b", episodeId: "e1", seq: 1, outputLogprobs: [null as unknown as number, -0.5], segments: [{ role: "user", text: "h\u00e9 \u{1f600} \ud800 \"q\"\n", ids: [7, -0, 9] }] }),
        trackedCall({
          callId: "c",
          episodeId: "e1",
          seq: 2,
          messages: JSON.parse('[{"role":"user","content":[{"type":"text","text":"x"}],"__proto__":{"a":1},"extra":null}]') as unknown[],
          tools: [{ type: "function", function: { name: "ls", parameters: { type: "object" } } }],
        }),
      ];
      for (const c of odd) record(c);
      await release("e1");
      const { file, memory } = rows("ORDER BY seq");
      expect(file).toEqual(memory);
      const back = tracker.callsOf("e1");
      expect(back[0]!.headerIds).toEqual([1.5, 2]);
      expect(back[0]!.outputIds).toEqual([2 ** 31, -1, 0]);
      expect(back[0]!.outputLogprobs).toEqual([null, null, 0, 1e-300, -1e21]);
      expect(back[1]!.segments[0]!.text).toBe("h\u00e9 \u{1f600} \ud800 \"q\"\n");
    }));

  it("on a file, a large call (a long message) is packed a slice at a time and recorded as the same row, or finished by a flush", () =>
    onFileAndInMemory(async ({ tracker, record, flush, rows }) => {
      const text = `${"lorem ipsum \u00e9\u{1f600}\n".repeat(20_000)}\ud800 end`;
      const ids = Array.from({ length: 150_000 }, (_, i) => (i * 7919) % 151_000);
      const large = (callId: string, seq: number): TrackedCall =>
        trackedCall({
          callId,
          episodeId: "e1",
          seq,
          messages: [{ role: "system", content: "short" }, { role: "user", content: [{ type: "text", text }] }],
          tools: [{ type: "function", function: { name: "ls", description: text.slice(0, 40_000) } }],
          segments: [
            { role: "system", text: "short", ids: [1, 2] },
            { role: "user", text, ids },
          ],
        });
      // a frozen model's call: no segments, its messages are large
      const frozen = trackedCall({ callId: "f", episodeId: "e1", seq: 9, trainable: false, segments: [], headerIds: [], outputIds: [], outputLogprobs: [], messages: [{ role: "user", content: text }] });
      // packed on the event loop's turns, then posted
      record(large("l1", 0));
      record(trackedCall({ callId: "s1", episodeId: "e1", seq: 1 }));
      await new Promise((resolve) => setTimeout(resolve, 400));
      // finished in place by the flush; one large segment has an id no Int32Array holds
      record(large("l2", 2));
      const odd = large("l3", 3);
      odd.segments[1] = { ...odd.segments[1]!, ids: ids.map((id, i) => (i === 100_000 ? 1.5 : id)) };
      record(odd);
      record(frozen);
      flush();
      const { file, memory } = rows("ORDER BY seq");
      expect(file).toHaveLength(5);
      expect(file).toEqual(memory);
      tracker.release("e1");
      await tracker.committed("e1");
      const back = tracker.callsOf("e1");
      expect(back[0]!.segments[1]!.text).toBe(text);
      expect(back[0]!.segments[1]!.ids).toEqual(ids);
      expect((back[0]!.messages[1] as { content: Array<{ text: string }> }).content[0]!.text).toBe(text);
      // an episode ended with a large call still being packed: `committed` waits for it to be posted and committed
      record({ ...large("l4", 0), episodeId: "e2" });
      tracker.release("e2");
      await tracker.committed("e2");
      expect(rows("WHERE episode_id = 'e2'").file).toHaveLength(1);
    }));

  it("on a file, what a call repeats (messages, tools, segments, their ids in objects of their own) crosses once and is recorded as the same rows, across batches, agents and episodes", () =>
    onFileAndInMemory(async ({ tracker, reference, release, flush, rows }) => {
      // a seeded generator (mulberry32), so a failure replays
      let seed = 7;
      const rand = (n: number) => {
        seed = (seed + 0x6d2b79f5) | 0;
        let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        return ((t ^ (t >>> 14)) >>> 0) % n;
      };
      const segmentPool = Array.from({ length: 6 }, (_, i) => ({ role: "user" as const, text: `segment ${i} \u00e9`, ids: Array.from({ length: 5 + i }, (_, k) => k * i) }));
      const toolPool = [null, [{ type: "function", function: { name: "ls", parameters: { type: "object" } } }]];
      const conversations = new Map<string, unknown[]>();
      let n = 0;
      for (let op = 0; op < 400; op++) {
        const episodeId = `e${rand(3)}`;
        const agentId = rand(2) === 0 ? "a" : "b";
        const r = rand(40);
        if (r === 0) {
          await release(episodeId);
          conversations.delete(`${episodeId}/a`);
          conversations.delete(`${episodeId}/b`);
          continue;
        }
        if (r === 1 && rand(3) === 0) {
          tracker.discard(episodeId);
          reference.discard(episodeId);
          conversations.delete(`${episodeId}/a`);
          conversations.delete(`${episodeId}/b`);
          continue;
        }
        if (r === 2) {
          flush();
          continue;
        }
        if (r === 3) {
          await new Promise((resolve) => setTimeout(resolve, 110));
          continue;
        }
        // the conversation grows, repeats (as new objects, as a client re-sends it), or changes
        const key = `${episodeId}/${agentId}`;
        const before = conversations.get(key) ?? [{ role: "system", content: "be brief" }];
        const copy = JSON.parse(JSON.stringify(before)) as unknown[];
        const change = rand(4);
        const messages =
          change === 0 ? [...copy, { role: "user", content: `q${op}` }] : change === 1 ? copy : change === 2 ? [...copy.slice(0, Math.max(1, copy.length - 1)), { role: "tool", content: `t${op}`, tool_call_id: "c" }] : [{ role: "system", content: `other ${op}` }];
        conversations.set(key, messages);
        // a new segment; one of the pool's: itself, an object of its own with its ids (as qwen3 renders one), its ids under another text or role
        const segments = Array.from({ length: 1 + rand(3) }, () => {
          const kind = rand(6);
          if (kind === 0) return { role: "user" as const, text: `fresh ${op}`, ids: [op, 1, 2] };
          const s = segmentPool[rand(segmentPool.length)]!;
          return kind === 1 ? { ...s } : kind === 2 ? { ...s, text: `${s.text}.` } : kind === 3 ? { ...s, role: "tool" as const } : s;
        });
        const c = trackedCall({ callId: `c${n++}`, episodeId, agentId, seq: n, messages, tools: toolPool[rand(2)] === null ? null : (JSON.parse(JSON.stringify(toolPool[1])) as unknown[]), segments });
        tracker.record({ ...c, messages: [...c.messages] });
        reference.record({ ...c, messages: [...c.messages] });
      }
      flush();
      const { file, memory } = rows("ORDER BY call_id");
      expect(file.length).toBeGreaterThan(150);
      expect(file).toEqual(memory);
    }));

  it("on a file and in memory, a row leaves out what repeats its agent's previous call (storage linear in the episode), and reads back whole", () =>
    onFileAndInMemory(async ({ db, tracker, record, release, rows }) => {
      const system = { role: "system", content: "be brief" };
      const tools = [{ type: "function", function: { name: "ls" } }];
      const segmentOf = new Map<unknown, { role: "system" | "user" | "assistant"; text: string; ids: number[] }>();
      // a segment object of its own per prompt, sharing its message's ids (as qwen3 renders them)
      const segment = (m: { role: string; content: string }) => {
        let s = segmentOf.get(m);
        if (s === undefined) segmentOf.set(m, (s = { role: m.role as "user", text: m.content, ids: Array.from({ length: 20 }, (_, i) => i + m.content.length) }));
        return { ...s };
      };
      const recorded: TrackedCall[] = [];
      let messages: Array<{ role: string; content: string }> = [system];
      for (let seq = 0; seq < 30; seq++) {
        messages = [...messages, { role: "user", content: `question ${seq}` }];
        // the client sends the conversation again as new objects; the tracker shares the repeats
        const sent = JSON.parse(JSON.stringify(messages)) as typeof messages;
        const c = trackedCall({ callId: `c${String(seq).padStart(2, "0")}`, episodeId: "e1", seq, messages: sent, tools: JSON.parse(JSON.stringify(tools)) as unknown[], segments: messages.map(segment), outputText: `answer ${seq}` });
        record(c);
        recorded.push(JSON.parse(JSON.stringify(c)) as TrackedCall);
        messages = [...messages, { role: "assistant", content: `answer ${seq}` }];
      }
      await release("e1");
      const { file, memory } = rows("ORDER BY seq");
      expect(file).toEqual(memory);
      const row = (seq: number) => db.prepare("SELECT messages, segments, tools, messages_from, segments_from, tools_repeated, prompt_tokens FROM calls WHERE seq = ?").get(seq) as Record<string, unknown>;
      // the first call whole; a later one its new messages (the last answer, the next question) and its new segments
      expect(row(0)).toMatchObject({ messages_from: 0, segments_from: 0, tools_repeated: 0, prompt_tokens: 2 * 20 + 1 });
      expect(row(0).tools).not.toBeNull();
      expect(row(29)).toMatchObject({ messages_from: 58, segments_from: 58, tools_repeated: 1, tools: null, prompt_tokens: 60 * 20 + 1 });
      expect(JSON.parse(row(29).messages as string)).toEqual([{ role: "assistant", content: "answer 28" }, { role: "user", content: "question 29" }]);
      expect((JSON.parse(row(29).segments as string) as unknown[]).length).toBe(2);
      // linear: every row of a later call holds two messages and two segments
      const { total } = db.prepare("SELECT SUM(length(messages) + length(segments)) AS total FROM calls").get() as { total: number };
      expect(total).toBeLessThan(30 * (JSON.stringify(row(0).messages).length + JSON.stringify(row(0).segments).length) * 3);
      // read back from run.db (the episode left memory once committed): each call whole
      const back = tracker.callsOf("e1");
      expect(JSON.parse(JSON.stringify(back))).toEqual(recorded);
    }));

  it("on a file, a segment sent longer ago than the writer thread keeps is sent again", () =>
    onFileAndInMemory(async ({ tracker, record, release, rows }) => {
      const first = { role: "user" as const, text: "first", ids: [1, 2, 3] };
      record(trackedCall({ callId: "c0", episodeId: "e1", segments: [first] }));
      // more segments kept since than the thread holds
      for (let i = 1; i <= 2100; i++) {
        record(trackedCall({ callId: `c${i}`, episodeId: "e1", seq: i, segments: [{ role: "user", text: `s${i}`, ids: [i] }] }));
        if (i % 700 === 0) tracker.flush();
      }
      record(trackedCall({ callId: "last", episodeId: "e1", seq: 2101, segments: [first] }));
      await release("e1");
      const { file, memory } = rows("ORDER BY seq");
      expect(file).toEqual(memory);
    }));

  it("on a file, batches handed over while a large one is still being packed wait their turn, so their repeats refer to what it sent", () =>
    inTempDir(async (dir) => {
      const db = openRunDb(join(dir, "run.db"));
      const mem = openRunDb(":memory:");
      const writer = createCallWriter(db);
      const reference = createCallWriter(mem);
      const text = "x".repeat(200_000);
      const messages = [{ role: "system", content: "s" }, { role: "user", content: text }];
      const segment = { role: "user" as const, text: "s", ids: [1, 2] };
      const large = trackedCall({ callId: "large", episodeId: "e1", messages, segments: [segment, { role: "user", text, ids: Array.from({ length: 150_000 }, (_, i) => i) }] });
      // the same agent's next calls repeat its messages (the same objects) and its first segment
      const next = (i: number) => trackedCall({ callId: `n${i}`, episodeId: "e1", seq: i, messages: [...messages, { role: "user", content: `q${i}` }], segments: [segment] });
      const write = (calls: TrackedCall[]) => {
        writer.write(calls);
        reference.write(calls);
      };
      write([large]);
      // the large batch has begun: it sent its messages and its first segment, not yet posted
      await new Promise((resolve) => setImmediate(resolve));
      write([next(1)]);
      write([next(2)]);
      writer.forget("e1");
      reference.forget("e1");
      write([next(3)]);
      writer.sync();
      const rows = (d: typeof db) => d.prepare("SELECT * FROM calls ORDER BY call_id").all();
      expect(rows(db)).toHaveLength(4);
      expect(rows(db)).toEqual(rows(mem));
      writer.close();
      db.close();
      mem.close();
    }));

  it("trackers of several databases share the writer thread: each commits its own rows, a failure is its own, one closed leaves the others writing", () =>
    inTempDir(async (dir) => {
      const [a, b, c] = ["a", "b", "c"].map((n) => openRunDb(join(dir, `${n}.db`)));
      const [ta, tb] = [createTracker(a!), createTracker(b!)];
      const count = (d: typeof a) => (d!.prepare("SELECT COUNT(*) AS n FROM calls").get() as { n: number }).n;
      ta.record(call("e1", 0));
      tb.record(call("e1", 0));
      ta.flush();
      tb.flush();
      ta.record(call("e1", 0)); // the same call id again: a's batch fails
      tb.record(call("e1", 1));
      expect(() => ta.flush()).toThrow(/UNIQUE constraint failed/);
      tb.flush();
      expect([count(a), count(b)]).toEqual([1, 2]);
      tb.close();
      // a tracker started after another closed writes through the same thread
      const tc = createTracker(c!);
      tc.record(call("e1", 0));
      tc.release("e1");
      await tc.committed("e1");
      expect(count(c)).toBe(1);
      tc.close();
      for (const d of [a, b, c]) d!.close();
    }));
});
