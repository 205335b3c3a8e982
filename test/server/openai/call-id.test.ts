import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { newCallId } from "../../../server/openai/call-id.ts";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The time an id carries: its first 48 bits. */
const timeOf = (id: string): number => Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

describe("newCallId", () => {
  it("is a UUID version 7 whose first 48 bits are the time in ms", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 48 - 1 }), (now) => {
        const id = newCallId(now);
        expect(id).toMatch(UUID_V7);
        expect(timeOf(id)).toBe(now);
      }),
    );
    const now = Date.now();
    expect(newCallId(now).slice(0, 13)).toBe(`${now.toString(16).padStart(12, "0").slice(0, 8)}-${now.toString(16).padStart(12, "0").slice(8)}`);
  });

  it("is unique, its random bits spread, past many refills of its random pool", () => {
    const now = Date.now();
    const ids = Array.from({ length: 20_000 }, () => newCallId(now));
    expect(new Set(ids).size).toBe(ids.length);
    // every hex digit of the random tail (past the version digit) is used at each place
    for (const at of [15, 16, 17, 20, 21, 22, 24, 30, 35]) expect(new Set(ids.map((id) => id[at])).size).toBe(16);
    // the variant digit takes its four values
    expect(new Set(ids.map((id) => id[19]))).toEqual(new Set(["8", "9", "a", "b"]));
  });

  it("sorts in time order across milliseconds", () => {
    const times = [0, 1, 255, 256, 2 ** 32 - 1, 2 ** 32, Date.now(), Date.now() + 1, 2 ** 48 - 1];
    const ids = times.map((t) => newCallId(t));
    expect([...ids].sort()).toEqual(ids);
  });
});
