import { describe, expect, it } from "vitest";
import { LastCalls, toCallRow } from "../../../server/tracker/call-rows.ts";
import { type PackedBatch, packCalls, packCallsSliced, RowMaker, type WireBatch, WireMemory } from "../../../server/tracker/call-wire.ts";
import type { TrackedCall } from "../../../server/tracker/tracker.ts";
import { trackedCall } from "../helpers/tracked-call.ts";

/**
 * The event loop's packing and the writer thread's rows, in one thread: each batch crosses as postMessage
 * carries it (a structured clone, its buffers moved). What `call-writer.ts` adds (the thread, the queue of
 * large batches) is tested through the tracker (tracker.test.ts).
 */
function wire() {
  const memory = new WireMemory();
  const maker = new RowMaker();
  const cross = (packed: PackedBatch): { batch: WireBatch; rows: unknown[][] } => {
    const batch = structuredClone(packed.batch, { transfer: packed.transfer });
    return { batch, rows: maker.rows(batch) };
  };
  /** Each agent's last call, for the in-memory writer's rows. */
  const lastCalls = new LastCalls();
  return {
    /** The rows the in-memory writer writes for these calls, after those before them. */
    rowsOf: (calls: TrackedCall[]) => calls.map((c) => toCallRow(c, lastCalls.next(c))),
    send: (calls: TrackedCall[], forget: string[] = []) => cross(packCalls(calls, memory, forget)),
    sendSliced: (calls: TrackedCall[]) => {
      const job = packCallsSliced(calls, memory);
      let r = job.next();
      while (!r.done) r = job.next();
      return cross(r.value);
    },
  };
}

describe("call wire: batches cross in few elements and are written as the in-memory writer writes them", () => {
  it("a call that repeats its agent's previous one crosses no message, no tools and no segment, only its own strings", () => {
    const { send, rowsOf } = wire();
    const messages = [{ role: "system", content: "be brief" }, { role: "user", content: "hi" }];
    const tools = [{ type: "function", function: { name: "ls" } }];
    const segments = [{ role: "system" as const, text: "be brief", ids: [1, 2] }, { role: "user" as const, text: "hi", ids: [3] }];
    const at = (seq: number) => trackedCall({ callId: `c${seq}`, episodeId: "e1", seq, messages, tools, segments, outputText: `ok ${seq}` });
    const first = send([at(0)]);
    expect(first.rows).toEqual(rowsOf([at(0)]));
    expect(first.batch.names).toEqual(["e1", "solver", "main", "stop", "system", "user"]);
    const calls = [at(1), at(2)];
    const { batch, rows } = send(calls);
    expect(rows).toEqual(rowsOf(calls));
    expect([batch.messages, batch.tools, batch.names, batch.text]).toEqual([[], [], [], "c1ok 1c2ok 2"]);
  });

  it("a call that adds messages sends those alone; a call that changes earlier ones sends them from there", () => {
    const { send, rowsOf } = wire();
    const system = { role: "system", content: "s" };
    const q1 = { role: "user", content: "q1" };
    const a1 = { role: "assistant", content: "a1" };
    const calls = [
      trackedCall({ callId: "c0", episodeId: "e1", messages: [system, q1] }),
      trackedCall({ callId: "c1", episodeId: "e1", seq: 1, messages: [system, q1, a1, { role: "user", content: "q2" }] }),
      trackedCall({ callId: "c2", episodeId: "e1", seq: 2, messages: [system, { role: "user", content: "other" }] }),
      trackedCall({ callId: "c3", episodeId: "e1", seq: 3, messages: [] }),
    ];
    for (const c of calls) expect(send([c]).rows).toEqual(rowsOf([c]));
  });

  it("segments in objects of their own that share a message's ids (as qwen3 renders them) cross once; the same ids with another role or text cross again", () => {
    const { send, rowsOf } = wire();
    const ids = [7, 8, 9];
    const text = "h\u00e9 \u{1f600}";
    const fresh = (role: "user" | "assistant", t: string) => ({ role, text: t, ids });
    const calls = [
      trackedCall({ callId: "c0", episodeId: "e1", segments: [fresh("user", text)] }),
      // a new string of the same text, as the next request's message is
      trackedCall({ callId: "c1", episodeId: "e1", seq: 1, segments: [fresh("user", JSON.parse(JSON.stringify(text)) as string)] }),
      trackedCall({ callId: "c2", episodeId: "e1", seq: 2, segments: [fresh("assistant", text)] }),
      trackedCall({ callId: "c3", episodeId: "e1", seq: 3, segments: [fresh("assistant", "other")] }),
      trackedCall({ callId: "c4", episodeId: "e1", seq: 4, segments: [fresh("assistant", "other"), fresh("user", text)] }),
    ];
    const texts = calls.map((c) => {
      const { batch, rows } = send([c]);
      expect(rows).toEqual(rowsOf([c]));
      return batch.text;
    });
    // each call's id and output, then the text of each segment it sent
    expect(texts).toEqual([`c0ok${text}`, "c1ok", `c2ok${text}`, "c3okother", `c4ok${text}`]);
  });

  it("names cross once, and their table starts over past its size or length on both sides", () => {
    const { send, rowsOf } = wire();
    // more episodes than the table holds, then fewer with ids longer than it holds
    const episodes = [...Array.from({ length: 17_000 }, (_, i) => `e${i}`), ...Array.from({ length: 30 }, (_, i) => `e${i}${"x".repeat(50_000)}`)];
    const calls = episodes.map((episodeId, i) => trackedCall({ callId: `c${i}`, episodeId, agentId: `a${i % 3}` }));
    let restarts = 0;
    // batches of 500, the long ids one a batch (the table starts over between batches)
    for (let i = 0; i < calls.length; i += i < 17_000 ? 500 : 1) {
      const batch = calls.slice(i, i < 17_000 ? i + 500 : i + 1);
      const sent = send(batch, [episodes[i]!]);
      if (i > 0 && sent.batch.namesAt === 0) restarts++;
      expect(sent.rows).toEqual(rowsOf(batch));
    }
    expect(restarts).toBeGreaterThanOrEqual(2);
  });

  it("any text crosses exactly: two-byte, lone surrogates, empty, beside one-byte text in the same batch", () => {
    const { send, rowsOf } = wire();
    const odd = ["", "\ud800", "\udfff x", "\u{1f600}", "caf\u00e9", "\u0000\n\"\\", "plain"];
    const calls = odd.map((s, i) =>
      trackedCall({ callId: `${s}c${i}`, episodeId: `e${s}`, agentId: s, policy: s, outputText: s, segments: [{ role: "user", text: s, ids: [i] }, { role: "tool", text: `${s}${s}`, ids: [] }] }),
    );
    expect(send(calls).rows).toEqual(rowsOf(calls));
  });

  it("a segment whose role or text is not a string is written as the in-memory writer writes it", () => {
    const { send, rowsOf } = wire();
    const segments = [
      { role: "user", text: undefined, ids: [1] },
      { role: 3, text: "x", ids: [Number.NaN, 2] },
      { role: "user", text: "ok", ids: [4] },
    ] as unknown as TrackedCall["segments"];
    const calls = [trackedCall({ callId: "c0", episodeId: "e1", segments }), trackedCall({ callId: "c1", episodeId: "e1", seq: 1, segments })];
    expect(send(calls).rows).toEqual(rowsOf(calls));
  });

  it("a large call's long strings are put back in place: a message that is one, a message's part, the tools', a segment's", () => {
    const { sendSliced, rowsOf } = wire();
    const long = `${"lorem \u00e9 ".repeat(8_000)}\ud800`;
    const calls = [
      trackedCall({
        callId: "c0",
        episodeId: "e1",
        messages: ["short", long, { role: "user", content: [{ type: "text", text: long }] }],
        tools: [{ type: "function", function: { name: "ls", description: long } }],
        segments: [{ role: "user", text: long, ids: Array.from({ length: 140_000 }, (_, i) => i % 1000) }],
      }),
      trackedCall({ callId: "c1", episodeId: "e1", seq: 1, trainable: false, segments: [], messages: [{ role: "user", content: long.repeat(3) }] }),
      trackedCall({ callId: "c2", episodeId: "e2" }),
    ];
    expect(sendSliced(calls).rows).toEqual(rowsOf(calls));
  });
});
