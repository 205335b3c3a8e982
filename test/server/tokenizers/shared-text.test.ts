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

  it("a long text fills chunks of a few hundred KB, never one buffer of its size, and round-trips across them", async () => {
    const long = `${"é数学 abc".repeat(200_000)}😀 end`;
    const packed = await packSegments([["a", long], [1, "b"]], async () => {});
    expect(packed.chunks.length).toBeGreaterThan(3);
    for (const c of packed.chunks) expect(c.byteLength).toBeLessThanOrEqual(3 * (1 << 17));
    expect(unpackSegments(packed)).toEqual([[`a${long}`], [1, "b"]]);
  });

  it("ids round-trip: each segment's ids, empty ones included", () => {
    const segs = [[1, 2, 3], [], [151644]];
    const ends = [3, 3, 4];
    expect(unpackIds(packIds(segs.flat(), ends)).map((a) => Array.from(a))).toEqual(segs);
  });
});
