import { describe, expect, it } from "vitest";
import { sameJson, shareRepeats } from "../../../server/tracker/repeats.ts";

describe("repeats: what a call sends again of its agent's previous call", () => {
  it("takes two values as the same only when JSON.stringify writes the same text", () => {
    expect(sameJson({ role: "user", content: "hi" }, JSON.parse('{"role":"user","content":"hi"}'))).toBe(true);
    expect(sameJson([1, "a", null, { b: [true] }], [1, "a", null, { b: [true] }])).toBe(true);
    // key order is part of the text
    expect(sameJson({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false);
    expect(sameJson({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameJson([1, 2], [1, 2, 3])).toBe(false);
    expect(sameJson({ a: "x" }, { a: "y" })).toBe(false);
    expect(sameJson(1, "1")).toBe(false);
    expect(sameJson([], {})).toBe(false);
    expect(sameJson(null, {})).toBe(false);
    // either side, whatever the other's type
    expect(sameJson({}, null)).toBe(false);
    expect(sameJson("1", 1)).toBe(false);
    expect(sameJson("a", { a: 1 })).toBe(false);
    expect(sameJson([], "")).toBe(false);
    expect(sameJson(undefined, null)).toBe(false);
    expect(sameJson(null, null)).toBe(true);
    // not sure: different
    expect(sameJson(new Date(0), new Date(0))).toBe(false);
    const long = "x".repeat(300_000);
    expect(sameJson(long, `${long.slice(1)}x`)).toBe(false);
  });

  it("keeps the previous call's objects for the messages it repeats, in their places", () => {
    const previous = [{ role: "system", content: "s" }, { role: "user", content: "q1" }];
    const again = JSON.parse(JSON.stringify(previous)) as unknown[];
    expect(shareRepeats(previous, again)).toBe(previous);
    const grown = [...(JSON.parse(JSON.stringify(previous)) as unknown[]), { role: "user", content: "q2" }];
    const shared = shareRepeats(previous, grown);
    expect(shared).toEqual(grown);
    expect(shared[0]).toBe(previous[0]);
    expect(shared[1]).toBe(previous[1]);
    expect(shared[2]).toBe(grown[2]);
    const cut = [{ role: "system", content: "s" }];
    expect(shareRepeats(previous, cut)).toEqual(cut);
    expect(shareRepeats(previous, cut)[0]).toBe(previous[0]);
    const changed = [{ role: "system", content: "other" }, { role: "user", content: "q1" }];
    expect(shareRepeats(previous, changed)).toBe(changed);
  });
});
