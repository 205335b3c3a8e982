import { describe, expect, it } from "vitest";
import { toCallRow, INSERT_CALL, leftOut } from "../../../server/tracker/call-rows.ts";
import { type CallRow, fromCallRows } from "../../../server/tracker/read-call-rows.ts";
import { CallRowsIncompleteError } from "../../../server/tracker/errors.ts";
import { trackedCall } from "../helpers/tracked-call.ts";

const COLUMNS = /\(([^)]*)\)/.exec(INSERT_CALL)![1]!.split(",").map((c) => c.trim());

/** A positional row of `INSERT_CALL` as SQLite returns it, by column name. */
const named = (row: unknown[]): CallRow => Object.fromEntries(COLUMNS.map((c, i) => [c, row[i]])) as unknown as CallRow;

const system = { role: "system", content: "s" };
const q1 = { role: "user", content: "q1" };
const tools = [{ type: "function", function: { name: "ls" } }];
const first = trackedCall({ callId: "c0", episodeId: "e1", messages: [system, q1], tools });
const second = trackedCall({ callId: "c1", episodeId: "e1", seq: 1, messages: [system, q1, { role: "user", content: "q2" }], tools, segments: [...first.segments, { role: "user", text: "q2", ids: [9] }] });

describe("fromCallRows: rows that leave out what repeats their agent's previous call, read back whole", () => {
  it("a row's left-out messages, segments and tools come from its agent's previous row", () => {
    const rows = [named(toCallRow(first)), named(toCallRow(second, leftOut(second, first)))];
    expect(rows[1]).toMatchObject({ messages_from: 2, segments_from: 1, tools_repeated: 1, tools: null, messages: '[{"role":"user","content":"q2"}]' });
    const back = fromCallRows(rows);
    expect(back.map((c) => [c.messages, c.tools, c.segments])).toEqual([
      [first.messages, first.tools, first.segments],
      [second.messages, second.tools, second.segments],
    ]);
  });

  it("a segment repeats when it is the same array of ids, or equal ids up to 4,096 of them (a longer copy is not compared: it would hold the event loop)", () => {
    const segment = (ids: number[]) => ({ role: "user" as const, text: "t", ids });
    const ids = (n: number) => Array.from({ length: n }, (_, i) => i);
    const left = (a: number[], b: number[]) => leftOut({ messages: [], tools: null, segments: [segment(a)] }, { messages: [], tools: null, segments: [segment(b)] }).segments;
    const long = ids(5000);
    expect([left(ids(4096), ids(4096)), left(long, long), left(ids(5000), ids(5000)), left([1, 2], [1, 3])]).toEqual([1, 1, 0, 0]);
  });

  it("rows of a file from before those columns (none of them present) read as whole", () => {
    const old = (row: unknown[]) => {
      const r = named(row) as unknown as Record<string, unknown>;
      for (const c of ["messages_from", "segments_from", "tools_repeated", "prompt_tokens"]) delete r[c];
      return r as unknown as CallRow;
    };
    expect(fromCallRows([old(toCallRow(second))])[0]!.messages).toEqual(second.messages);
  });

  it("a row whose previous call was not read before it is refused, naming the call and how to read", () => {
    const alone = named(toCallRow(second, leftOut(second, first)));
    expect(() => fromCallRows([alone])).toThrow(CallRowsIncompleteError);
    expect(() => fromCallRows([alone])).toThrow(/call c1 \(episode e1, agent solver, seq 1\).*ORDER BY agent_id, seq/);
    // another agent's or episode's row is no previous call
    const other = named(toCallRow({ ...first, episodeId: "e2" }));
    expect(() => fromCallRows([other, alone])).toThrow(CallRowsIncompleteError);
  });
});
