import { type AnswerSource, type ExtractedAnswer, extractAnswer } from "./extract-answer.ts";
import { compareMath, goldHasSeveralAnswers } from "./math-equal.ts";
import { readIntegerAnswer } from "./read-integer-answer.ts";

/** `integer`: AIME (an exact number, 0-999 on the sheet); `math`: general equivalence through the CAS. */
export type VerifyMode = "integer" | "math";

export type VerifyFlag =
  | "no-answer"
  | "unparseable"
  | "hedged"
  | "answer-from-thinking"
  | "unclosed-thinking"
  | "multiple-boxed-values"
  | "time-limit"
  | "gold-unparseable"
  /** The algebra layer failed, by kind (never hidden as "unparseable"). */
  | "stack-overflow"
  | "cas-error"
  /** A bug of the verifier itself (never expected; it is reported, not hidden). */
  | "verifier-error";

export interface Verdict {
  correct: boolean;
  reward: 0 | 1;
  /** The extracted answer text, before normalisation; null when none was found. */
  answer: string | null;
  source: AnswerSource | null;
  flags: VerifyFlag[];
}

export interface VerifyOptions {
  /** Default: `integer`. */
  mode?: VerifyMode;
  /** Wall-clock budget for the CAS in `math` mode, ms (default 1000). */
  timeLimitMs?: number;
}

/**
 * Scores a model response against a gold answer: reward 1 if its final answer equals the gold, else 0.
 * Never throws: a failure inside the verifier is a verdict of 0 flagged with its kind.
 */
export function verifyAnswer(gold: string, response: string, options: VerifyOptions = {}): Verdict {
  try {
    return verifyUnguarded(gold, response, options);
  } catch (err) {
    return verdict(false, null, null, [err instanceof RangeError ? "stack-overflow" : "verifier-error"]);
  }
}

function verifyUnguarded(gold: string, response: string, options: VerifyOptions): Verdict {
  const mode = options.mode ?? "integer";
  const found = extractAnswer(response);
  if (found === null) return verdict(false, null, null, ["no-answer"]);
  const flags: VerifyFlag[] = [];
  if (found.part === "thinking") flags.push("answer-from-thinking");
  if (response.includes("<think>") && !response.includes("</think>")) flags.push("unclosed-thinking");
  if (found.boxCount > 1) flags.push("multiple-boxed-values");
  if (found.group.length > 1) {
    // Several boxes stated together: the members of a list the gold asks for, or else a hedge.
    if (mode === "math" && goldHasSeveralAnswers(gold)) {
      return judgeMath(gold, found.group.join(", "), found, flags, options);
    }
    const last = found.group.at(-1)!;
    if (found.group.some((r) => !sameAnswer(r, last, mode, options))) return verdict(false, found.raw, found.source, [...flags, "hedged"]);
  }
  return mode === "integer" ? judgeInteger(gold, found.raw, found, flags, options) : judgeMath(gold, found.raw, found, flags, options);
}

function judgeInteger(gold: string, raw: string, found: ExtractedAnswer, flags: VerifyFlag[], options: VerifyOptions): Verdict {
  const g = readIntegerAnswer(gold, "gold");
  if (g.kind !== "value") return judgeMath(gold, raw, found, [...flags, "gold-unparseable"], options);
  const p = readIntegerAnswer(raw);
  if (p.kind === "hedged") return verdict(false, raw, found.source, [...flags, "hedged"]);
  if (p.kind === "unparseable") return verdict(false, raw, found.source, [...flags, "unparseable"]);
  return verdict(p.value.num === g.value.num && p.value.den === g.value.den, raw, found.source, flags);
}

const OR = /\bor\b/;

function judgeMath(gold: string, raw: string, found: ExtractedAnswer, flags: VerifyFlag[], options: VerifyOptions): Verdict {
  const several = goldHasSeveralAnswers(gold);
  if ((OR.test(raw) || found.alternatives) && !several && !OR.test(gold)) return verdict(false, raw, found.source, [...flags, "hedged"]);
  const r = compareMath(gold, raw, options.timeLimitMs ?? 1000, several ? { predictionSeparators: [" or "] } : {});
  switch (r.kind) {
    case "equal":
      return verdict(true, raw, found.source, flags);
    case "different":
      return verdict(false, raw, found.source, flags);
    case "unparseable":
      return verdict(false, raw, found.source, [...flags, "unparseable"]);
    case "time-limit":
      return verdict(false, raw, found.source, [...flags, "time-limit"]);
    case "error":
      return verdict(false, raw, found.source, [...flags, r.error]);
  }
}

function sameAnswer(a: string, b: string, mode: VerifyMode, options: VerifyOptions): boolean {
  if (mode === "integer") {
    const x = readIntegerAnswer(a);
    const y = readIntegerAnswer(b);
    if (x.kind === "value" && y.kind === "value") return x.value.num === y.value.num && x.value.den === y.value.den;
  }
  return compareMath(a, b, options.timeLimitMs ?? 1000).kind === "equal";
}

function verdict(correct: boolean, answer: string | null, source: AnswerSource | null, flags: VerifyFlag[]): Verdict {
  return { correct, reward: correct ? 1 : 0, answer, source, flags };
}
