import "./isolate-shims.ts";
import { ComputeEngine } from "@cortex-js/compute-engine";
import { evaluateExact } from "./exact-rational.ts";
import { normalizeAnswer } from "./normalize-answer.ts";

export type MathComparison = { kind: "equal" } | { kind: "different" } | { kind: "unparseable" } | { kind: "time-limit" };

/** Longest expression handed to the CAS; longer ones are compared as text only. */
const MAX_CAS_LENGTH = 300;
/** Factorials and powers this large are not expanded by the CAS (they would blow the time limit). */
const HUGE = /\d{4,}\s*!|\^\s*\{?\s*\d{4,}/;

type Expr = ReturnType<ComputeEngine["parse"]>;

let engine: ComputeEngine | undefined;

function getEngine(): ComputeEngine {
  engine ??= new ComputeEngine();
  return engine;
}

interface Budget {
  deadline: number;
}

/**
 * General math equivalence for non-AIME datasets: exact rationals first, then tuples, intervals and
 * sets element-wise, equations side by side, and the CAS (`@cortex-js/compute-engine`) for the rest.
 * Gold first: `x = 3` as a prediction matches gold `3`, but not the other way round.
 */
export function compareMath(gold: string, prediction: string, timeLimitMs: number): MathComparison {
  try {
    // Building the engine (once per isolate) is start-up cost, not this comparison's.
    getEngine();
    const budget = { deadline: Date.now() + timeLimitMs };
    return compareNormalized(normalizeAnswer(gold), normalizeAnswer(prediction), budget);
  } catch {
    // The CAS throws on some malformed input; that is an unparseable answer, not a crash.
    return { kind: "unparseable" };
  }
}

function compareNormalized(gold: string, pred: string, budget: Budget): MathComparison {
  if (compact(gold) === compact(pred)) return { kind: "equal" };
  if (pred === "") return { kind: "unparseable" };
  const g = readCollection(gold);
  const p = readCollection(pred);
  if (g !== null || p !== null) {
    if (g === null || p === null) return { kind: "different" };
    return compareCollections(g, p, budget);
  }
  const goldEq = splitEquation(gold);
  const predEq = splitEquation(pred);
  if (goldEq !== null && predEq !== null) {
    // Both sides must match: `x = 0` and `y^2 = 0` are different equations even though both sides are 0.
    return all([() => compareScalar(goldEq[0], predEq[0], budget), () => compareScalar(goldEq[1], predEq[1], budget)]);
  }
  if (predEq !== null && goldEq === null && isVariable(predEq[0])) return compareScalar(gold, predEq[1], budget);
  if (predEq !== null || goldEq !== null) return { kind: "different" };
  return compareScalar(gold, pred, budget);
}

function compareScalar(gold: string, pred: string, budget: Budget): MathComparison {
  if (compact(gold) === compact(pred)) return { kind: "equal" };
  const a = evaluateExact(gold);
  const b = evaluateExact(pred);
  if (a !== null && b !== null) return a.num === b.num && a.den === b.den ? { kind: "equal" } : { kind: "different" };
  if (pred.length > MAX_CAS_LENGTH || gold.length > MAX_CAS_LENGTH || HUGE.test(pred) || HUGE.test(gold)) {
    return { kind: "different" };
  }
  if (Date.now() > budget.deadline) return { kind: "time-limit" };
  const ce = getEngine();
  const x = ce.parse(gold);
  const y = ce.parse(pred);
  if (!y.isValid) return { kind: "unparseable" };
  if (!x.isValid) return { kind: "different" };
  if (Date.now() > budget.deadline) return { kind: "time-limit" };
  const same = x.isEqual(y);
  if (same === true) return { kind: "equal" };
  if (same === false) return { kind: "different" };
  return numericallyEqual(x, y) ? { kind: "equal" } : { kind: "different" };
}

/** Relative tolerance only: two tiny values (1/2004! and 1/2006!) are not equal just for being near 0. */
function numericallyEqual(x: Expr, y: Expr): boolean {
  const a = x.N().re;
  const b = y.N().re;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  if (a === b) return true;
  return Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
}

interface Collection {
  open: string;
  close: string;
  items: string[];
}

const PAIRS: Record<string, string[]> = { "(": [")", "]"], "[": [")", "]"], "\\{": ["\\}"] };

/** `(1, 2)`, `[0, 1)`, `\{1, 2\}`, or a bare top-level comma list `1, 2` (an unordered set of answers). */
function readCollection(s: string): Collection | null {
  for (const [open, closes] of Object.entries(PAIRS)) {
    if (!s.startsWith(open)) continue;
    for (const close of closes) {
      if (!s.endsWith(close)) continue;
      const inner = s.slice(open.length, s.length - close.length);
      if (!balanced(inner)) continue;
      const items = splitTopLevel(inner, ",");
      if (items.length > 1 || open === "\\{") return { open, close, items };
    }
  }
  const items = splitTopLevel(s, ",");
  return items.length > 1 ? { open: "", close: "", items } : null;
}

function compareCollections(g: Collection, p: Collection, budget: Budget): MathComparison {
  if (g.items.length !== p.items.length) return { kind: "different" };
  const unordered = g.open === "\\{" || g.open === "";
  if (unordered) {
    if (p.open !== g.open) return { kind: "different" };
    const left = [...p.items];
    for (const item of g.items) {
      const idx = left.findIndex((cand) => compareNormalized(item, cand, budget).kind === "equal");
      if (idx < 0) return { kind: "different" };
      left.splice(idx, 1);
    }
    return { kind: "equal" };
  }
  if (g.open !== p.open || g.close !== p.close) return { kind: "different" };
  return all(g.items.map((item, i) => () => compareNormalized(item, p.items[i]!, budget)));
}

function all(checks: Array<() => MathComparison>): MathComparison {
  for (const check of checks) {
    const r = check();
    if (r.kind !== "equal") return r;
  }
  return { kind: "equal" };
}

function splitEquation(s: string): [string, string] | null {
  const sides = splitTopLevel(s, "=");
  return sides.length === 2 ? [sides[0]!, sides[1]!] : null;
}

function isVariable(s: string): boolean {
  return /^[A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?$|^\\[A-Za-z]+$/.test(s.trim());
}

function compact(s: string): string {
  return s.replace(/\s+/g, "");
}

function balanced(s: string): boolean {
  let depth = 0;
  for (const ch of s) {
    if ("([{".includes(ch)) depth++;
    else if (")]}".includes(ch)) depth--;
    if (depth < 0) return false;
  }
  return depth === 0;
}

/** Splits on `sep` outside any brackets; `\{`/`\}` count as brackets too. */
function splitTopLevel(s: string, sep: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === "\\") {
      i++;
      continue;
    }
    if ("([{".includes(ch)) depth++;
    else if (")]}".includes(ch)) depth--;
    else if (ch === sep && depth === 0) {
      out.push(s.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(s.slice(start).trim());
  return out;
}
