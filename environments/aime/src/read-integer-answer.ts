import { evaluateExact, type Rational } from "./exact-rational.ts";
import { normalizeAnswer } from "./normalize-answer.ts";

export type IntegerReading =
  | { kind: "value"; value: Rational }
  | { kind: "hedged"; values: string[] }
  | { kind: "unparseable" };

const PLAIN = /^\s*\d{1,15}\s*$/;
const HEDGE_SEPARATOR = /\s*(?:,|;|\bor\b|\band\b|\\quad|\\qquad|\\pm|\\mp)\s*/;
const WITH_UNITS = /^(-?\d+(?:\.\d+)?|\\frac\{\d+\}\{\d+\})\s+[A-Za-z][A-Za-z\s.]*$/;
const LEADING_NUMBER = /^(-?\d+)(?:\.\s|\s+|\.$|$)(?!.*\d)/;

/** Reads an AIME-style answer: one exact number, possibly written as `x = 033` or `\frac{84}{2}`. */
export function readIntegerAnswer(raw: string): IntegerReading {
  // The common case, a bare number, skips normalisation.
  if (PLAIN.test(raw)) return { kind: "value", value: { num: BigInt(raw.trim()), den: 1n } };
  let s = normalizeAnswer(raw).replace(/\{,\}/g, "");
  const eq = s.lastIndexOf("=");
  if (eq >= 0) s = s.slice(eq + 1).trim();
  if (s.startsWith("\\pm") || s.startsWith("\\mp")) return { kind: "hedged", values: [s] };
  const parts = s.split(HEDGE_SEPARATOR).filter((p) => p.trim() !== "");
  if (parts.length === 0) return { kind: "unparseable" };
  // A part that is no number ("33, which is the answer") is commentary, not a second candidate.
  const values = parts.map((p) => readOne(p.trim())).filter((v): v is Rational => v !== null);
  const first = values[0];
  if (first === undefined) return { kind: "unparseable" };
  if (values.some((v) => v.num !== first.num || v.den !== first.den)) return { kind: "hedged", values: parts };
  return { kind: "value", value: first };
}

function readOne(s: string): Rational | null {
  const direct = evaluateExact(s);
  if (direct !== null) return direct;
  const units = WITH_UNITS.exec(s) ?? LEADING_NUMBER.exec(s);
  return units?.[1] === undefined ? null : evaluateExact(units[1]);
}
