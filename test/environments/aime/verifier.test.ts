import { describe, expect, it } from "vitest";
import { verifyAnswer } from "../../../environments/aime/src/verify.ts";
import { INTEGER_CASES, MATH_CASES, type VerifierCase } from "./verifier-cases.ts";

function check(c: VerifierCase): void {
  const v = verifyAnswer(c.gold, c.response, { mode: c.mode ?? "integer" });
  expect(v.correct, `${c.why}: ${JSON.stringify(v)}`).toBe(c.expected);
  expect(v.reward).toBe(c.expected ? 1 : 0);
  if (c.flag !== undefined) expect(v.flags, c.why).toContain(c.flag);
}

describe("aime verifier case table", () => {
  it("holds at least 150 cases, each with a reason", () => {
    const all = [...INTEGER_CASES, ...MATH_CASES];
    expect(all.length).toBeGreaterThanOrEqual(150);
    for (const c of all) expect(c.why.length).toBeGreaterThan(5);
  });
  it.each(INTEGER_CASES.map((c) => [c.why, c] as const))("integer: %s", (_why, c) => check(c));
  it.each(MATH_CASES.map((c) => [c.why, c] as const))("math: %s", (_why, c) => check(c));
});
