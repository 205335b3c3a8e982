import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { verifyAnswer, type VerifyMode } from "../../../environments/aime/src/verify.ts";

/** Ways the grammar accepts to write the integer `n` as a final answer. */
function integerForms(n: number): string[] {
  const s = String(n);
  const grouped = n.toLocaleString("en-US");
  return [
    `\\boxed{${s}}`,
    `So the answer is $\\boxed{${s.padStart(4, "0")}}$.`,
    `Answer: ${s}`,
    `Answer \\[ ${s} \\]`,
    `The final answer is $${s}$. I hope it is correct.`,
    `Final Answer: The requested count is ${s}.`,
    `We add everything up.\n\n**${s}**`,
    `Thus $m + n = ${s}$.`,
    `\\boxed{${s}.0}`,
    `\\boxed{\\frac{${2 * n}}{2}}`,
    `\\boxed{x = ${s}}`,
    `\\boxed{${s} \\text{ cm}}`,
    `\\boxed{${grouped}}`,
    `\\boxed{${grouped.replace(/,/g, "{,}")}}`,
    `<think>maybe \\boxed{${n + 7}}</think>\\boxed{${s}}`,
  ];
}

/** Wrong values near `n`: off by one, a digit more, a factor of ten, the sign. */
function perturbedIntegers(n: number): number[] {
  const out = [n + 1, n * 10 + 3, n + 1000];
  if (n > 0) out.push(n - 1, -n);
  if (n >= 10) out.push(Math.floor(n / 10));
  return out;
}

function gcd(a: number, b: number): number {
  return b === 0 ? Math.abs(a) : gcd(b, a % b);
}

/** Ways to write the fraction p/q (reduced, q > 1) in math mode. */
function fractionForms(p: number, q: number): string[] {
  const sign = p < 0 ? "-" : "";
  const a = Math.abs(p);
  return [
    `\\boxed{${sign}\\frac{${a}}{${q}}}`,
    `\\boxed{${sign}\\dfrac{${a}}{${q}}}`,
    `\\boxed{${p}/${q}}`,
    `\\boxed{${sign}\\frac{${3 * a}}{${3 * q}}}`,
    `\\boxed{\\frac{${p}}{${q}}}`,
    `Final Answer: The probability is $${sign}\\frac{${a}}{${q}}$.`,
    `Hence\n\\[ r = ${sign}\\tfrac{${a}}{${q}} \\]`,
    `\\boxed{${sign}\\frac{${a}}{${q}} \\text{ meters}}`,
  ];
}

function judge(gold: string, response: string, mode: VerifyMode): boolean {
  return verifyAnswer(gold, response, { mode }).correct;
}

describe("aime verifier properties", () => {
  it("every accepted surface form of an integer equals it; every perturbed value differs", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2_000_000 }), fc.constantFrom<VerifyMode>("integer", "math"), (n, mode) => {
        for (const form of integerForms(n)) expect(judge(String(n), form, mode), `${mode}: ${form}`).toBe(true);
        for (const wrong of perturbedIntegers(n)) {
          for (const form of integerForms(wrong).filter((f) => !f.includes("<think>"))) {
            expect(judge(String(n), form, mode), `${mode}: gold ${n}, ${form}`).toBe(false);
          }
        }
      }),
      { numRuns: 60, seed: 21 },
    );
  });

  it("every accepted surface form of a fraction equals it; every perturbed fraction differs", () => {
    const fraction = fc
      .tuple(fc.integer({ min: -500, max: 500 }), fc.integer({ min: 2, max: 500 }))
      .filter(([p, q]) => p !== 0 && gcd(p, q) === 1);
    fc.assert(
      fc.property(fraction, ([p, q]) => {
        const gold = `${p < 0 ? "-" : ""}\\frac{${Math.abs(p)}}{${q}}`;
        for (const form of fractionForms(p, q)) expect(judge(gold, form, "math"), form).toBe(true);
        const wrongs: Array<[number, number]> = [[p + 1, q], [p, q + 1], [-p, q]];
        if (Math.abs(p) !== 1) wrongs.push([q * Math.sign(p), Math.abs(p)]);
        for (const [wp, wq] of wrongs) {
          if (wp * q === p * wq || wp === 0) continue;
          const g = gcd(wp, wq);
          for (const form of fractionForms(wp / g, wq / g).filter((f) => wq / g > 1 || !f.includes("frac"))) {
            expect(judge(gold, form, "math"), `gold ${gold}, ${form}`).toBe(false);
          }
        }
      }),
      { numRuns: 80, seed: 21 },
    );
  });
});
