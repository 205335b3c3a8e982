import { describe, expect, it } from "vitest";
import { verifyAnswer } from "../../../environments/aime/src/verify.ts";
import { CASE_GROUPS, INTEGER_CASES, MATH_CASES, type VerifierCase } from "./verifier-cases.ts";

function check(c: VerifierCase): void {
  const v = verifyAnswer(c.gold, c.response, { mode: c.mode ?? "integer" });
  expect(v.correct, `${c.why}: ${JSON.stringify(v)}`).toBe(c.expected);
  expect(v.reward).toBe(c.expected ? 1 : 0);
  if (c.flag !== undefined) expect(v.flags, c.why).toContain(c.flag);
}

const ALL = [...INTEGER_CASES, ...MATH_CASES, ...CASE_GROUPS.flatMap((g) => g.cases)];

describe("aime verifier case table", () => {
  it("holds several hundred cases, each with a reason, a third or more of them must-reject", () => {
    expect(ALL.length).toBeGreaterThanOrEqual(500);
    for (const c of ALL) expect(c.why.length).toBeGreaterThan(5);
    expect(ALL.filter((c) => !c.expected).length).toBeGreaterThan(ALL.length / 3);
  });
  it.each(INTEGER_CASES.map((c) => [c.why, c] as const))("integer: %s", (_why, c) => check(c));
  it.each(MATH_CASES.map((c) => [c.why, c] as const))("math: %s", (_why, c) => check(c));
  for (const group of CASE_GROUPS) {
    describe(group.cause, () => {
      it.each(group.cases.map((c) => [`${c.mode ?? "integer"}: ${c.why}`, c] as const))("%s", (_why, c) => check(c));
    });
  }
});
