import { describe, expect, it } from "vitest";
import { promptIds } from "../../../server/tokenizers/prompt-ids.ts";

describe("promptIds", () => {
  it("joins plain and encode-thread (Int32Array) segments, then the header, into one plain array", () => {
    const shared = new Int32Array(new SharedArrayBuffer(16));
    shared.set([9, 4, 5, 6]);
    const segments = [
      { role: "system" as const, text: "s", ids: [1, 2] },
      { role: "user" as const, text: "u", ids: shared.subarray(1) },
    ];
    const ids = promptIds({ segments, headerIds: [7] });
    expect(Array.isArray(ids)).toBe(true);
    expect(ids).toEqual([1, 2, 4, 5, 6, 7]);
  });
});
