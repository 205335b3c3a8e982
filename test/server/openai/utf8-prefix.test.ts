import { describe, expect, it } from "vitest";
import { completionOf, splitUtf8, startsWithBytes } from "../../../server/openai/utf8-prefix.ts";

const bytes = (s: string) => [...Buffer.from(s, "utf8")];

describe("UTF-8 read a token at a time", () => {
  it("splits bytes into whole characters and the start of one not complete", () => {
    expect(splitUtf8(bytes("café"))).toEqual({ text: "café", rest: [] });
    expect(splitUtf8(bytes("caf🙂").slice(0, 5))).toEqual({ text: "caf", rest: [0xf0, 0x9f] });
    expect(splitUtf8([0xc3])).toEqual({ text: "", rest: [0xc3] });
  });

  it("refuses what no continuation makes valid", () => {
    expect(splitUtf8([0x80])).toBeNull(); // a continuation byte first
    expect(splitUtf8([0xc0, 0x80])).toBeNull(); // overlong
    expect(splitUtf8([0xc3, 0x41])).toBeNull(); // a lead byte, then ASCII
    expect(splitUtf8([0xed, 0xa0])).toBeNull(); // the start of a surrogate
    expect(splitUtf8([0xf5])).toBeNull(); // past U+10FFFF
    expect(splitUtf8([0xe0, 0x80])).toBeNull(); // only overlong forms begin so
  });

  it("finds a character that completes a prefix, and tells which ones begin with it", () => {
    expect(startsWithBytes(completionOf([0xe0])!, [0xe0])).toBe(true);
    expect(startsWithBytes(completionOf([0xf0, 0x9f])!, [0xf0, 0x9f])).toBe(true);
    expect(completionOf([0x41])).toBeNull();
    expect(startsWithBytes("é", [0xc3])).toBe(true);
    expect(startsWithBytes("é", [0xc3, 0xa9])).toBe(false);
  });
});
