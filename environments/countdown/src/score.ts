import { evaluateExpression } from "./expression.ts";
import type { CountdownProblem } from "./problem.ts";

export type CountdownVerdict = "correct" | "wrong-value" | "bad-numbers" | "division-by-zero" | "malformed";

/**
 * 1 if the expression uses each given number at most once and equals the target; 0.1 if it is a
 * well-formed expression that does not; 0 if it does not parse.
 */
export function scoreReply(reply: string, p: CountdownProblem): { reward: number; verdict: CountdownVerdict } {
  const line = reply.trim().split("\n")[0]!.replace(/=\s*-?\d+\s*$/, "");
  const e = evaluateExpression(line);
  if (e === null) return { reward: 0, verdict: "malformed" };
  if (!usesAllowedNumbers(e.numbers, p.numbers)) return { reward: 0.1, verdict: "bad-numbers" };
  if (e.value === null) return { reward: 0.1, verdict: "division-by-zero" };
  if (e.value.den !== 1 || e.value.num !== p.target) return { reward: 0.1, verdict: "wrong-value" };
  return { reward: 1, verdict: "correct" };
}

function usesAllowedNumbers(used: readonly number[], given: readonly number[]): boolean {
  const left = [...given];
  for (const n of used) {
    const i = left.indexOf(n);
    if (i < 0) return false;
    left.splice(i, 1);
  }
  return true;
}
