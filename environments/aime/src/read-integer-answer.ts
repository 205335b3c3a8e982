import { evaluateExact, type Rational } from "./exact-rational.ts";
import { isLabel, splitTopLevel } from "./latex-structure.ts";
import { normalizeAnswer, stripUnitWords } from "./normalize-answer.ts";

export type IntegerReading =
  | { kind: "value"; value: Rational }
  | { kind: "hedged"; values: string[] }
  | { kind: "unparseable" };

const PLAIN = /^\s*\d{1,15}\s*$/;
const HEDGE_SEPARATOR = /\s*(?:,|;|\bor\b|\band\b|\\pm|\\mp)\s*/;
/** A value, then commentary with no number in it (`33 which is the count`). */
const VALUE_THEN_WORDS = /^(-?\d+(?:\.\d+)?|\\frac\{\d+\}\{\d+\})(?:\s*[.:]?\s+([A-Za-z][^\d]*))?$/;

/**
 * Reads an AIME-style answer: one exact number, possibly written as `x = 033` or `\frac{84}{2}`. The
 * gold is trusted, so only a label is dropped from it (`n = 7`); a prediction's chain is read at its
 * last side (`m+n = 7`), unless it opens with another constant (`12 = 21` is no statement of 21).
 */
export function readIntegerAnswer(raw: string, role: "gold" | "prediction" = "prediction"): IntegerReading {
  // The common case, a bare number, skips normalisation.
  if (PLAIN.test(raw)) return { kind: "value", value: { num: BigInt(raw.trim()), den: 1n } };
  let s = normalizeAnswer(raw);
  const sides = splitTopLevel(s, "=").flatMap((side) => splitTopLevel(side, "\\approx"));
  if (sides.length > 1) {
    const first = sides[0]!;
    const last = sides.at(-1)!;
    if (role === "gold" && !(sides.length === 2 && isLabel(first))) return { kind: "unparseable" };
    if (role === "prediction" && !isLabel(first)) {
      const a = evaluateExact(first);
      const b = readOne(last);
      if (a !== null && (b === null || a.num !== b.num || a.den !== b.den)) return { kind: "unparseable" };
    }
    s = last;
  }
  if (s.startsWith("\\pm") || s.startsWith("\\mp")) return { kind: "hedged", values: [s] };
  const parts = s.split(HEDGE_SEPARATOR).filter((p) => p.trim() !== "");
  if (parts.length === 0) return { kind: "unparseable" };
  // A part without digits ("33, which is the answer") is commentary; one with digits that does not read
  // as a number ("or possibly 13") is another candidate.
  // "not 4" rejects a value rather than offering it.
  const offered = parts.filter((p) => !/^(?:not|rather than|instead of)\b/i.test(p.trim()));
  const readings = offered.map((p) => readOne(p.trim()));
  if (readings.some((v, i) => v === null && /\d/.test(offered[i]!))) {
    return readings.some((v) => v !== null) ? { kind: "hedged", values: offered } : { kind: "unparseable" };
  }
  const values = readings.filter((v): v is Rational => v !== null);
  const first = values[0];
  if (first === undefined) return { kind: "unparseable" };
  if (values.some((v) => v.num !== first.num || v.den !== first.den)) return { kind: "hedged", values: parts };
  return { kind: "value", value: first };
}

function readOne(s: string): Rational | null {
  const direct = evaluateExact(s);
  if (direct !== null) return direct;
  const m = VALUE_THEN_WORDS.exec(s);
  if (m?.[1] === undefined) return null;
  // `5 million` is not 5: the words must be ones a unit strip would drop.
  if (m[2] !== undefined && stripUnitWords(`0 ${m[2]}`) !== "0" && !/^(?:which|that|since|because)\b/i.test(m[2])) return null;
  return evaluateExact(m[1]);
}
