import { describe, expect, it } from "vitest";
import { longTextKey, SegmentCache } from "../../../server/tokenizers/segment-cache.ts";

describe("longTextKey", () => {
  const base = "lorem ipsum dolor sit amet\n".repeat(20_000);

  it("is the same for equal texts, whichever strings hold them", () => {
    const a = `${base}tail`;
    const b = [base, "tail"].join("");
    expect(longTextKey(a)).toBe(longTextKey(b));
    expect(longTextKey(a).startsWith(`${a.length}:`)).toBe(true);
  });

  it("tells apart texts of one length that differ at the end or at a sampled character", () => {
    const ends = [0, 1, 2, 3].map((n) => `${base}${n}`);
    expect(new Set(ends.map(longTextKey)).size).toBe(4);
    const first = `x${base.slice(1)}`;
    expect(longTextKey(first)).not.toBe(longTextKey(base));
  });

  it("keys texts too short to sample, the empty one included", () => {
    expect(longTextKey("")).toBe(longTextKey(""));
    expect(longTextKey("a")).not.toBe(longTextKey("b"));
  });
});

describe("SegmentCache with long texts in the key", () => {
  it("finds only an equal text; one of the same length that differs where the key does not look is still told apart by comparing", () => {
    const cache = new SegmentCache<number>(16);
    const text = "abcdefgh".repeat(10_000);
    const key = (t: string) => ({ key: `\u0003${longTextKey(t)}`, long: [t] });
    cache.add(key(text), 1);
    expect(cache.find(key(text.split("").join("")))).toBe(1);
    // an unsampled middle character changed: same key, so the full compare decides
    const middle = 40_001;
    const other = `${text.slice(0, middle)}Z${text.slice(middle + 1)}`;
    expect(longTextKey(other)).toBe(longTextKey(text));
    expect(cache.find(key(other))).toBeUndefined();
  });
});
