import { describe, expect, it } from "vitest";
import { verifyAnswer } from "../../../environments/aime/src/verify.ts";

/**
 * A policy in RL often degenerates into repeating one phrase until the token limit. The verifier must
 * stay near-linear on such replies: past the manifest's callTimeoutMs (5 s) the step is a `timeout`
 * failure, masked and retried rather than scored 0, so the policy is never taught out of it. Each reply
 * here is 200 kB (about 50k tokens); before the fix some took 7-37 s.
 */
const SIZE = 200_000;
const repeat = (unit: string): string => unit.repeat(Math.ceil(SIZE / unit.length));

const CASES: ReadonlyArray<[why: string, response: string]> = [
  ["many boxes (each box re-searched the whole text for \\fbox)", repeat("\\boxed{1} ")],
  ["many \\fbox", repeat("\\fbox{1} ")],
  ["\\boxed repeated without an argument", `${repeat("\\boxed")}{33}`],
  ["\\boxed with brace-less arguments", repeat("\\boxed x ")],
  ["answer markers without a value on one line", repeat("Answer: foo ")],
  ["'final answer is' repeated on one line", repeat("final answer is the ")],
  ["periods inside math spans after a marker", `Answer: ${repeat("$x. A$ ")}`],
  ["verbs inside math spans after a marker", `Answer: ${repeat("$is$ ")}`],
];

describe("aime verifier on degenerate repetitions", () => {
  it.each(CASES)("%s: under 1.5 s for 200 kB, both modes", (_why, response) => {
    for (const mode of ["integer", "math"] as const) {
      const t0 = performance.now();
      const v = verifyAnswer("7", response, { mode });
      const ms = performance.now() - t0;
      expect(ms, `${mode}: ${ms.toFixed(0)} ms`).toBeLessThan(1500);
      expect(v.reward).toBe(0);
    }
  });
});
