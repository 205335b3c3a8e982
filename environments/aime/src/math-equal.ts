import "./isolate-shims.ts";
import { ComputeEngine } from "@cortex-js/compute-engine";
import { evaluateExact } from "./exact-rational.ts";
import { close, evaluate, numericallyEqual, parseExpression, proportional, variablesOf } from "./expression.ts";
import {
  type Collection,
  isLabel,
  readCollection,
  readMatrix,
  readRelation,
  type Relation,
  relationToInterval,
  splitTopLevel,
} from "./latex-structure.ts";
import { normalizeAnswer } from "./normalize-answer.ts";

/** Why the algebra layer could not decide: reported, never swallowed. */
export type AlgebraError = "stack-overflow" | "cas-error";

export type MathComparison =
  | { kind: "equal" }
  | { kind: "different" }
  | { kind: "unparseable" }
  | { kind: "time-limit" }
  | { kind: "error"; error: AlgebraError; message: string };

/** Longest expression handed to the CAS; longer ones are compared by the other means only. */
const MAX_CAS_LENGTH = 300;
/** Factorials and powers this large are not expanded by the CAS (they would blow the time limit). */
const HUGE = /\d{4,}\s*!|\^\s*\{?\s*\d{4,}/;
const MAX_NESTING = 8;

type CasExpr = ReturnType<ComputeEngine["parse"]>;

let engine: ComputeEngine | undefined;

function getEngine(): ComputeEngine {
  engine ??= new ComputeEngine();
  return engine;
}

interface Budget {
  deadline: number;
}

export interface CompareOptions {
  /** The gold holds several answers: the prediction's "or" lists them rather than hedging. */
  predictionSeparators?: readonly string[];
}

/**
 * General math equivalence. Gold first (it is trusted, the prediction is not): a label on the gold
 * (`k = 1`) is dropped, a chain on the prediction (`x = 5+6 = 11`) is read at its last side. Then
 * unions, matrices, inequalities (as intervals when the other side is one), tuples, intervals and
 * sets element-wise, equations side by side, and scalars: exact rationals, rounding at the
 * prediction's precision, numeric comparison at sample points, and the CAS for what is left.
 */
export function compareMath(gold: string, prediction: string, timeLimitMs: number, options: CompareOptions = {}): MathComparison {
  const budget = { deadline: Date.now() + timeLimitMs };
  return compareNormalized(normalizeAnswer(gold), normalizeAnswer(prediction), budget, options, 0);
}

/** Whether the gold answer names several answers (`1, 2`, `1 and 2`, `\{1, 2\}`). */
export function goldHasSeveralAnswers(gold: string): boolean {
  const known = SEVERAL.get(gold);
  if (known !== undefined) return known;
  const c = readCollection(normalizeAnswer(gold));
  const several = c !== null && (c.open === "" || c.open === "\\{") && c.items.length > 1;
  if (SEVERAL.size >= 1024) SEVERAL.clear();
  SEVERAL.set(gold, several);
  return several;
}

/** Golds repeat across a group's responses. */
const SEVERAL = new Map<string, boolean>();

function compareNormalized(gold: string, pred: string, budget: Budget, options: CompareOptions, depth: number): MathComparison {
  if (compact(gold) === compact(pred)) return { kind: "equal" };
  if (pred === "") return { kind: "unparseable" };
  if (depth > MAX_NESTING) return { kind: "unparseable" };
  const next = (g: string, p: string): MathComparison => compareNormalized(g, p, budget, {}, depth + 1);

  const goldUnion = splitTopLevel(gold, "\\cup");
  const predUnion = splitTopLevel(pred, "\\cup");
  if (goldUnion.length > 1 || predUnion.length > 1) return matchUnordered(goldUnion, predUnion, next, budget);

  const goldMatrix = readMatrix(gold);
  const predMatrix = readMatrix(pred);
  if (goldMatrix !== null || predMatrix !== null) {
    if (goldMatrix === null || predMatrix === null) return { kind: "different" };
    if (goldMatrix.length !== predMatrix.length || goldMatrix.some((row, i) => row.length !== predMatrix[i]!.length)) {
      return { kind: "different" };
    }
    return all(goldMatrix.flatMap((row, i) => row.map((cell, j) => () => next(cell, predMatrix[i]![j]!))));
  }

  // `x \in [2, 5]`: the label is dropped on either side.
  const goldIn = IN.exec(gold);
  if (goldIn !== null && isLabel(goldIn[1]!)) return next(goldIn[2]!, IN.exec(pred)?.[2] ?? pred);
  const predIn = IN.exec(pred);
  if (predIn !== null && isLabel(predIn[1]!)) return next(gold, predIn[2]!);

  const goldRel = readRelation(gold);
  const predRel = readRelation(pred);
  if (goldRel !== null || predRel !== null) return compareRelations(gold, pred, goldRel, predRel, next, budget);

  // The gold's value: after a label (`k = 1`), or the last side of a longer chain (`z = 1 + 1 = 2`).
  const goldEq = splitTopLevel(gold, "=");
  const predEq = splitTopLevel(pred, "=");
  const goldValue = goldEq.length === 2 && isLabel(goldEq[0]!) ? goldEq[1]! : goldEq.length > 2 ? goldEq.at(-1)! : null;

  const g = readCollection(gold);
  const p = readCollection(pred, options.predictionSeparators);
  if (g !== null || (p !== null && goldValue === null)) {
    const decimal = decimalComma(gold, pred, g, p);
    if (decimal !== null) return next(decimal[0], decimal[1]);
    if (g === null || p === null) return { kind: "different" };
    return compareCollections(g, p, next, budget);
  }

  if (goldValue !== null) {
    // Two labels must be the same one: `x = 3` is not `y = 3`.
    if (predEq.length > 1 && isLabel(predEq[0]!) && goldEq.length === 2 && compact(predEq[0]!) !== compact(goldEq[0]!)) return { kind: "different" };
    if (predEq.length !== 2 || isLabel(predEq[0]!) || goldEq.length > 2) return next(goldValue, pred);
  }

  const approximate = APPROX.test(pred);
  if (goldEq.length === 1 && (predEq.length > 1 || approximate)) return compareChain(gold, predEq, next);
  if (goldEq.length === 2 && predEq.length === 2) return compareEquations(goldEq as [string, string], predEq as [string, string], budget, next);
  if (goldEq.length > 1 || predEq.length > 1) return { kind: "different" };
  return compareScalar(gold, pred, budget);
}

const APPROX = /\\approx(?![A-Za-z])/;

/**
 * `x = 5+5+1 = 11`: the last side is the answer; a chain opening with another constant (`12 = 21`) is
 * false. `x = 1/3 \approx 0.33`: the exact side counts; the approximation only for a decimal gold.
 */
function compareChain(gold: string, sides: string[], next: Compare): MathComparison {
  const first = sides[0]!;
  const [exact, ...approximations] = splitTopLevel(sides.at(-1)!, "\\approx");
  if (sides.length > 1 && !isLabel(first) && evaluateExact(first) !== null && next(first, exact!).kind !== "equal") return { kind: "different" };
  // `x \approx 11` states 11; `\frac{1}{3} \approx 0.33` states 1/3, and 0.33 only for a decimal gold.
  if (approximations.length > 0 && isLabel(exact!)) return next(gold, approximations.at(-1)!);
  const r = next(gold, exact!);
  if (r.kind === "equal" || approximations.length === 0 || !DECIMAL.test(gold)) return r;
  return next(gold, approximations.at(-1)!);
}

type Compare = (gold: string, pred: string) => MathComparison;

function compareRelations(gold: string, pred: string, g: Relation | null, p: Relation | null, next: Compare, budget: Budget): MathComparison {
  if (g !== null && p !== null) {
    if (g.ops.length !== p.ops.length || g.ops.some((op, i) => op !== p.ops[i])) return { kind: "different" };
    return all(g.sides.map((side, i) => () => next(side, p.sides[i]!)));
  }
  // An interval on one side, a one-variable inequality on the other.
  const gi = g === null ? readCollection(gold) : relationToInterval(g);
  const pi = p === null ? readCollection(pred) : relationToInterval(p);
  if (gi === null || pi === null || gi.open === "" || pi.open === "" || gi.open === "\\{" || pi.open === "\\{") return { kind: "different" };
  return compareCollections(gi, pi, next, budget);
}

function compareEquations(g: [string, string], p: [string, string], budget: Budget, next: Compare): MathComparison {
  const sideBySide = all([() => next(g[0], p[0]), () => next(g[1], p[1])]);
  if (sideBySide.kind === "equal") return sideBySide;
  // `2x+4y-3=0` and `y=-\frac{1}{2}x+\frac{3}{4}` are one equation: lhs - rhs of one is a constant
  // multiple of the other's.
  const x = parseExpression(`(${g[0]})-(${g[1]})`);
  const y = parseExpression(`(${p[0]})-(${p[1]})`);
  if (x === null || y === null || Date.now() > budget.deadline) return sideBySide;
  // Without variables, lhs - rhs is 0 for any two true equations (`2 = 2`, `3 = 3`): no reading then.
  if (variablesOf(x).size === 0) return sideBySide;
  return proportional(x, y) ? { kind: "equal" } : { kind: "different" };
}

/** `1,22` against a single value: a decimal comma (digit groups were joined by the normaliser already). */
function decimalComma(gold: string, pred: string, g: Collection | null, p: Collection | null): [string, string] | null {
  const reading = (s: string): string | null => {
    const m = /^(-?\d+),(\d+)$/.exec(s);
    return m === null ? null : `${m[1]}.${m[2]}`;
  };
  if (g === null && p !== null && p.open === "") {
    const d = reading(pred);
    return d === null ? null : [gold, d];
  }
  if (p === null && g !== null && g.open === "") {
    const d = reading(gold);
    return d === null ? null : [d, pred];
  }
  return null;
}

function compareCollections(g: Collection, p: Collection, next: Compare, budget: Budget): MathComparison {
  const unorderedG = g.open === "\\{" || g.open === "";
  const unorderedP = p.open === "\\{" || p.open === "";
  if (unorderedG || unorderedP) {
    if (!(unorderedG && unorderedP)) return { kind: "different" };
    return matchUnordered(g.items, p.items, next, budget);
  }
  if (g.open !== p.open || g.close !== p.close || g.items.length !== p.items.length) return { kind: "different" };
  return all(g.items.map((item, i) => () => next(item, p.items[i]!)));
}

function matchUnordered(goldItems: string[], predItems: string[], next: Compare, budget: Budget): MathComparison {
  // Sets: a member written twice is one member.
  const gold = distinct(goldItems);
  const pred = distinct(predItems);
  if (gold.length !== pred.length) return { kind: "different" };
  const left = [...pred];
  for (const item of gold) {
    let found = -1;
    for (let i = 0; i < left.length && found < 0; i++) {
      if (Date.now() > budget.deadline) return { kind: "time-limit" };
      const r = next(item, left[i]!);
      if (r.kind === "time-limit" || r.kind === "error") return r;
      if (r.kind === "equal") found = i;
    }
    if (found < 0) return { kind: "different" };
    left.splice(found, 1);
  }
  return { kind: "equal" };
}

function distinct(items: string[]): string[] {
  const seen = new Set<string>();
  return items.filter((it) => {
    const key = compact(it);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function all(checks: Array<() => MathComparison>): MathComparison {
  for (const check of checks) {
    const r = check();
    if (r.kind !== "equal") return r;
  }
  return { kind: "equal" };
}

const WORDS = /^[A-Za-z][A-Za-z ]+$/;
const IN = /^(.+?)\s*\\in(?![A-Za-z])\s*(.+)$/;
const DECIMAL = /^-?\d*\.(\d+)$/;

function compareScalar(gold: string, pred: string, budget: Budget): MathComparison {
  if (compact(gold) === compact(pred)) return { kind: "equal" };
  // Names (`Evelyn`) are words, not products of variables.
  if (WORDS.test(gold) || WORDS.test(pred)) return gold.toLowerCase() === pred.toLowerCase() ? { kind: "equal" } : { kind: "different" };
  const rounded = roundedEqual(gold, pred);
  if (rounded !== null) return rounded;
  const a = evaluateExact(gold);
  const b = evaluateExact(pred);
  if (a !== null && b !== null) return a.num === b.num && a.den === b.den ? { kind: "equal" } : { kind: "different" };
  const x = parseExpression(gold);
  const y = parseExpression(pred);
  if (x !== null && y !== null) {
    const r = numericallyEqual(x, y);
    if (r !== "unknown") return { kind: r };
  }
  if (pred.length > MAX_CAS_LENGTH || gold.length > MAX_CAS_LENGTH || HUGE.test(pred) || HUGE.test(gold)) return { kind: "different" };
  if (Date.now() > budget.deadline) return { kind: "time-limit" };
  return compareWithCas(gold, pred, budget);
}

/**
 * `0.3333` for `\frac{1}{3}`, `1.41421356` for `\sqrt{2}`: a decimal prediction with at least four
 * significant digits is compared at the precision it gives, against a gold that is not itself a decimal.
 */
function roundedEqual(gold: string, pred: string): MathComparison | null {
  const m = DECIMAL.exec(pred);
  if (m === null || DECIMAL.test(gold) || /^-?\d+$/.test(gold)) return null;
  const digits = pred.replace(/^-?0*\.?0*/, "").replace(".", "");
  if (digits.length < 4) return null;
  const goldExpr = parseExpression(gold);
  if (goldExpr === null) return null;
  const g = evaluate(goldExpr, new Map());
  if (!Number.isFinite(g)) return null;
  const p = Number(pred);
  const places = m[1]!.length;
  // Half a unit in the last place given, widened by the float error of the two values only.
  const tolerance = 0.5 * 10 ** -places + 2e-15 * Math.abs(g);
  return Math.abs(g - p) <= tolerance ? { kind: "equal" } : { kind: "different" };
}

function compareWithCas(gold: string, pred: string, budget: Budget): MathComparison {
  try {
    const ce = getEngine();
    const x = ce.parse(gold);
    const y = ce.parse(pred);
    if (!y.isValid) return { kind: "unparseable" };
    if (!x.isValid) return { kind: "different" };
    if (Date.now() > budget.deadline) return { kind: "time-limit" };
    const same = x.isEqual(y);
    if (same === true) return { kind: "equal" };
    if (same === false) return { kind: "different" };
    return casNumericallyEqual(x, y) ? { kind: "equal" } : { kind: "different" };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { kind: "error", error: err instanceof RangeError ? "stack-overflow" : "cas-error", message };
  }
}

/** Relative tolerance only: two tiny values (1/2004! and 1/2006!) are not equal just for being near 0. */
function casNumericallyEqual(x: CasExpr, y: CasExpr): boolean {
  const a = x.N().re;
  const b = y.N().re;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  return close(a, b);
}

function compact(s: string): string {
  return s.replace(/\s+/g, "");
}
