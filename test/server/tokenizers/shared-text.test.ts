import { describe, expect, it } from "vitest";
import { packIds, packSegments, unpackIds, unpackSegments } from "../../../server/tokenizers/shared-text.ts";

describe("segments packed for the encode thread", () => {
  it("round-trip: runs joined, ids in place, a surrogate pair on a slice boundary kept whole", async () => {
    const edge = `${"a".repeat((1 << 17) - 1)}😀${"b".repeat(10)}`;
    const segments = [["", 1, "user\n", edge, 2, "\n"], [3], ["数学 é", " x"], []];
    let yields = 0;
    const packed = await packSegments(segments, async () => {
      yields++;
    });
    expect(yields).toBeGreaterThan(0);
    expect(unpackSegments(packed)).toEqual([["", 1, `user\n${edge}`, 2, "\n"], [3], ["数学 é x"], []]);
  });

  it("ids round-trip: each segment's ids, empty ones included", () => {
    const segs = [[1, 2, 3], [], [151644]];
    const ends = [3, 3, 4];
    expect(unpackIds(packIds(segs.flat(), ends)).map((a) => Array.from(a))).toEqual(segs);
  });
});
