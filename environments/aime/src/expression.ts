import { scanTokens } from "./scan-tokens.ts";

/**
 * A small LaTeX expression reader for scalar answers: numbers, variables, + - * / ^, implicit products,
 * `\frac`, `\sqrt[n]{}`, `\binom`, `!`, `|x|`, the common functions and constants. It evaluates in
 * floating point so two answers can be compared numerically, at sample points when they hold
 * variables. Anything it does not know makes it return null, and the caller falls back to the CAS.
 */
export type Expr =
  | { k: "num"; v: number }
  | { k: "var"; name: string }
  | { k: "bin"; op: "+" | "-" | "*" | "/" | "^"; a: Expr; b: Expr }
  | { k: "neg"; a: Expr }
  | { k: "fn"; name: string; a: Expr; b?: Expr };

type Token = { t: "num"; v: number } | { t: "id"; v: string } | { t: "cmd"; v: string } | { t: "sym"; v: string };

const MAX_DEPTH = 60;
const FUNCTIONS = new Set([
  "sin", "cos", "tan", "sec", "csc", "cot", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "ln", "log", "exp",
]);
const CONSTANTS: Record<string, number> = { pi: Math.PI, infty: Number.POSITIVE_INFINITY };
const IGNORED = new Set(["left", "right", "displaystyle", ",", ";", "!", " ", "quad", "qquad"]);
const TIMES = new Set(["cdot", "times", "ast"]);

function tokenize(s: string): Token[] | null {
  return scanTokens<Token>(s, (rest) => {
    const ch = rest[0]!;
    if (ch === " " || ch === "\t" || ch === "\n") return { token: null, length: 1 };
    if (/[\d.]/.test(ch)) {
      const m = /^(?:\d+(?:\.\d*)?|\.\d+)/.exec(rest);
      return m === null ? null : { token: { t: "num", v: Number(m[0]) }, length: m[0].length };
    }
    if (ch === "\\") {
      const m = /^\\([A-Za-z]+|.)/.exec(rest);
      if (m === null || m[1] === "{" || m[1] === "}") return null;
      return { token: IGNORED.has(m[1]!) ? null : { t: "cmd", v: m[1]! }, length: m[0].length };
    }
    if (/[A-Za-z]/.test(ch)) {
      // `sin x` and `sqrt(2)` written without a backslash read as the function.
      const word = /^[A-Za-z]+/.exec(rest)![0];
      const fn = ["arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "sqrt", "sin", "cos", "tan", "sec", "csc", "cot", "ln", "log", "exp", "pi"].find((f) => word.startsWith(f));
      return fn !== undefined ? { token: { t: "cmd", v: fn }, length: fn.length } : { token: { t: "id", v: ch }, length: 1 };
    }
    return "+-*/^_(){}[]|!'".includes(ch) ? { token: { t: "sym", v: ch }, length: 1 } : null;
  });
}

/** Parses `source` into an expression, or null when it is not a plain scalar expression this reader knows. */
export function parseExpression(source: string): Expr | null {
  const tokens = tokenize(source);
  if (tokens === null || tokens.length === 0) return null;
  const p = new Parser(tokens);
  const e = p.expression(0);
  return e !== null && p.atEnd() ? e : null;
}

class Parser {
  private pos = 0;
  constructor(private readonly tokens: Token[]) {}

  atEnd(): boolean {
    return this.pos >= this.tokens.length;
  }

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }

  private isSym(v: string): boolean {
    const t = this.peek();
    return t?.t === "sym" && t.v === v;
  }

  expression(depth: number): Expr | null {
    if (depth > MAX_DEPTH) return null;
    let left = this.term(depth);
    while (left !== null && (this.isSym("+") || this.isSym("-"))) {
      const op = (this.tokens[this.pos++] as { v: "+" | "-" }).v;
      const right = this.term(depth);
      if (right === null) return null;
      left = { k: "bin", op, a: left, b: right };
    }
    return left;
  }

  private term(depth: number): Expr | null {
    let left = this.unary(depth);
    while (left !== null) {
      const t = this.peek();
      if (t === undefined) break;
      if ((t.t === "sym" && (t.v === "*" || t.v === "/")) || (t.t === "cmd" && (TIMES.has(t.v) || t.v === "div"))) {
        this.pos++;
        const right = this.unary(depth);
        if (right === null) return null;
        left = { k: "bin", op: t.v === "/" || t.v === "div" ? "/" : "*", a: left, b: right };
        continue;
      }
      if (this.startsPrimary(t)) {
        const right = this.postfix(depth);
        if (right === null) return null;
        left = { k: "bin", op: "*", a: left, b: right };
        continue;
      }
      break;
    }
    return left;
  }

  private startsPrimary(t: Token): boolean {
    if (t.t === "num" || t.t === "id") return true;
    if (t.t === "cmd") return !TIMES.has(t.v) && t.v !== "div";
    return t.v === "(" || t.v === "{" || t.v === "[";
  }

  private unary(depth: number): Expr | null {
    if (depth > MAX_DEPTH) return null;
    if (this.isSym("-") || this.isSym("+")) {
      const neg = this.isSym("-");
      this.pos++;
      const a = this.unary(depth + 1);
      return a === null ? null : neg ? { k: "neg", a } : a;
    }
    return this.postfix(depth);
  }

  private postfix(depth: number): Expr | null {
    let base = this.primary(depth + 1);
    while (base !== null) {
      if (this.isSym("!")) {
        this.pos++;
        base = { k: "fn", name: "factorial", a: base };
      } else if (this.isSym("^")) {
        this.pos++;
        const exp = this.exponent(depth + 1);
        if (exp === null) return null;
        base = { k: "bin", op: "^", a: base, b: exp };
      } else if (this.isSym("'")) {
        return null;
      } else break;
    }
    return base;
  }

  private exponent(depth: number): Expr | null {
    if (this.isSym("-")) {
      this.pos++;
      const a = this.primary(depth + 1);
      return a === null ? null : { k: "neg", a };
    }
    const t = this.peek();
    // `x^23` in LaTeX is x^2 * 3; `x^{23}` is the power 23.
    if (t?.t === "num" && Number.isInteger(t.v) && t.v >= 10) return null;
    return this.primary(depth + 1);
  }

  private group(depth: number, open: string, close: string): Expr | null {
    if (!this.isSym(open)) return null;
    this.pos++;
    const e = this.expression(depth + 1);
    if (e === null || !this.isSym(close)) return null;
    this.pos++;
    return e;
  }

  /** A command's argument: `{...}`, or one token (`\frac12`, `\sqrt3`). */
  private argument(depth: number): Expr | null {
    if (this.isSym("{")) return this.group(depth, "{", "}");
    const t = this.peek();
    if (t?.t === "num" || t?.t === "id") {
      this.pos++;
      return t.t === "num" ? { k: "num", v: t.v } : { k: "var", name: t.v };
    }
    return null;
  }

  private primary(depth: number): Expr | null {
    if (depth > MAX_DEPTH) return null;
    const t = this.peek();
    if (t === undefined) return null;
    if (t.t === "num") {
      this.pos++;
      return { k: "num", v: t.v };
    }
    if (t.t === "id") {
      this.pos++;
      let name = t.v;
      if (this.isSym("_")) {
        this.pos++;
        const sub = this.peek();
        if (sub?.t === "sym" && sub.v === "{") {
          const close = this.tokens.findIndex((x, j) => j > this.pos && x.t === "sym" && x.v === "}");
          if (close < 0) return null;
          name += `_${this.tokens.slice(this.pos + 1, close).map((x) => String(x.v)).join("")}`;
          this.pos = close + 1;
        } else if (sub !== undefined && sub.t !== "sym") {
          name += `_${String(sub.v)}`;
          this.pos++;
        } else return null;
      }
      return name === "e" ? { k: "num", v: Math.E } : { k: "var", name };
    }
    if (t.t === "sym") {
      if (t.v === "(") return this.group(depth, "(", ")");
      if (t.v === "{") return this.group(depth, "{", "}");
      if (t.v === "[") return this.group(depth, "[", "]");
      if (t.v === "|") {
        this.pos++;
        const e = this.expression(depth + 1);
        if (e === null || !this.isSym("|")) return null;
        this.pos++;
        return { k: "fn", name: "abs", a: e };
      }
      return null;
    }
    return this.command(t.v, depth);
  }

  private command(name: string, depth: number): Expr | null {
    this.pos++;
    if (name in CONSTANTS) return { k: "num", v: CONSTANTS[name]! };
    if (name === "frac" || name === "binom") {
      const a = this.argument(depth);
      const b = a === null ? null : this.argument(depth);
      if (a === null || b === null) return null;
      return name === "frac" ? { k: "bin", op: "/", a, b } : { k: "fn", name: "binom", a, b };
    }
    if (name === "sqrt") {
      let index: Expr | null = null;
      if (this.isSym("[")) {
        index = this.group(depth, "[", "]");
        if (index === null) return null;
      }
      const a = this.isSym("(") ? this.group(depth, "(", ")") : this.argument(depth);
      if (a === null) return null;
      return index === null ? { k: "fn", name: "sqrt", a } : { k: "fn", name: "root", a, b: index };
    }
    if (FUNCTIONS.has(name)) {
      let base: Expr | undefined;
      let power: Expr | null = null;
      if (name === "log" && this.isSym("_")) {
        this.pos++;
        const b = this.argument(depth);
        if (b === null) return null;
        base = b;
      }
      if (this.isSym("^")) {
        this.pos++;
        power = this.exponent(depth);
        if (power === null) return null;
      }
      const arg = this.isSym("(") ? this.group(depth, "(", ")") : this.functionArgument(depth);
      if (arg === null) return null;
      const call: Expr = base === undefined ? { k: "fn", name, a: arg } : { k: "fn", name, a: arg, b: base };
      return power === null ? call : { k: "bin", op: "^", a: call, b: power };
    }
    return null;
  }

  /** `\sin 2x` is sin(2x): the argument runs over a product of primaries. */
  private functionArgument(depth: number): Expr | null {
    let left = this.postfix(depth + 1);
    while (left !== null) {
      const t = this.peek();
      if (t === undefined || !(t.t === "num" || t.t === "id")) break;
      const right = this.postfix(depth + 1);
      if (right === null) return null;
      left = { k: "bin", op: "*", a: left, b: right };
    }
    return left;
  }
}

/** The variable names `e` holds. */
export function variablesOf(e: Expr, out: Set<string> = new Set()): Set<string> {
  if (e.k === "var") out.add(e.name);
  else if (e.k === "bin") {
    variablesOf(e.a, out);
    variablesOf(e.b, out);
  } else if (e.k === "neg") variablesOf(e.a, out);
  else if (e.k === "fn") {
    variablesOf(e.a, out);
    if (e.b !== undefined) variablesOf(e.b, out);
  }
  return out;
}

/** Evaluates `e` with `env` for its variables; NaN where it is undefined (or too large to compute). */
export function evaluate(e: Expr, env: ReadonlyMap<string, number>): number {
  switch (e.k) {
    case "num":
      return e.v;
    case "var":
      return env.get(e.name) ?? Number.NaN;
    case "neg":
      return -evaluate(e.a, env);
    case "bin": {
      const a = evaluate(e.a, env);
      const b = evaluate(e.b, env);
      switch (e.op) {
        case "+":
          return a + b;
        case "-":
          return a - b;
        case "*":
          return a * b;
        case "/":
          return b === 0 ? Number.NaN : a / b;
        case "^":
          return a < 0 && !Number.isInteger(b) ? Number.NaN : a ** b;
      }
    }
    // falls through: every op returns above
    case "fn":
      return evaluateFunction(e, env);
  }
}

/** The functions of one argument that take any real: the rest check their domain in evaluateFunction. */
const UNARY: Readonly<Record<string, (a: number) => number>> = {
  abs: Math.abs, factorial, sin: Math.sin, cos: Math.cos, tan: Math.tan, sec: (a) => 1 / Math.cos(a), csc: (a) => 1 / Math.sin(a), cot: (a) => 1 / Math.tan(a),
  arcsin: Math.asin, arccos: Math.acos, arctan: Math.atan, sinh: Math.sinh, cosh: Math.cosh, tanh: Math.tanh, exp: Math.exp,
};

function evaluateFunction(e: Extract<Expr, { k: "fn" }>, env: ReadonlyMap<string, number>): number {
  const a = evaluate(e.a, env);
  const b = e.b === undefined ? Number.NaN : evaluate(e.b, env);
  const unary = UNARY[e.name];
  if (unary !== undefined) return unary(a);
  switch (e.name) {
    case "sqrt":
      return a < 0 ? Number.NaN : Math.sqrt(a);
    case "root":
      if (!Number.isInteger(b) || b < 2) return Number.NaN;
      if (a < 0) return b % 2 === 1 ? -(Math.abs(a) ** (1 / b)) : Number.NaN;
      return a ** (1 / b);
    case "binom":
      return factorial(a) / (factorial(b) * factorial(a - b));
    case "ln":
      return a <= 0 ? Number.NaN : Math.log(a);
    case "log":
      if (a <= 0) return Number.NaN;
      return e.b === undefined ? Math.log10(a) : b > 0 && b !== 1 ? Math.log(a) / Math.log(b) : Number.NaN;
    default:
      return Number.NaN;
  }
}

/** n! for integers 0..170; NaN beyond (1/2004! and 1/2006! must not both read as 0). */
function factorial(n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > 170) return Number.NaN;
  let r = 1;
  for (let k = 2; k <= n; k++) r *= k;
  return r;
}

const SAMPLE_BASES = [0.7317, 1.3691, -0.5843, 2.2129, -1.6457, 0.4133];

const POINTS = new Map<string, Array<Map<string, number>>>();

/** Sample points: each variable gets its own value per point, the same for both sides (and every call). */
function samplePoints(names: readonly string[]): Array<Map<string, number>> {
  const key = names.join(",");
  let points = POINTS.get(key);
  if (points === undefined) {
    if (POINTS.size >= 256) POINTS.clear();
    points = makeSamplePoints(names);
    POINTS.set(key, points);
  }
  return points;
}

function makeSamplePoints(names: readonly string[]): Array<Map<string, number>> {
  return SAMPLE_BASES.map((base, p) => {
    const env = new Map<string, number>();
    names.forEach((name, j) => env.set(name, base + 0.1731 * (j + 1) * (p % 2 === 0 ? 1 : -1) + 0.0379 * j * j));
    return env;
  });
}

/** Relative closeness only: two tiny values are not equal for both being near 0. */
export function close(a: number, b: number): boolean {
  if (a === b) return true;
  return Math.abs(a - b) <= 1e-11 * Math.max(Math.abs(a), Math.abs(b));
}

/**
 * Whether two expressions agree: at every sample point where both are defined and finite (at least 3
 * such points when they hold variables). "unknown" when that cannot be decided numerically.
 */
export function numericallyEqual(x: Expr, y: Expr): "equal" | "different" | "unknown" {
  const names = [...variablesOf(x, variablesOf(y))].sort();
  if (names.length === 0) {
    const a = evaluate(x, new Map());
    const b = evaluate(y, new Map());
    if (!Number.isFinite(a) || !Number.isFinite(b)) return "unknown";
    // Past 2^53 a float no longer tells n from n + 1: such constants are not decided here.
    if (Math.max(Math.abs(a), Math.abs(b)) >= 2 ** 53) return "unknown";
    return close(a, b) ? "equal" : "different";
  }
  let valid = 0;
  for (const env of samplePoints(names)) {
    const a = evaluate(x, env);
    const b = evaluate(y, env);
    if (!Number.isFinite(a) || !Number.isFinite(b)) continue;
    if (!close(a, b)) return "different";
    valid++;
  }
  return valid >= 3 ? "equal" : "unknown";
}

/** Whether `x` is a non-zero constant multiple of `y` at every sample point (the same equation `x = 0`). */
export function proportional(x: Expr, y: Expr): boolean {
  const names = [...variablesOf(x, variablesOf(y))].sort();
  let ratio: number | null = null;
  let valid = 0;
  for (const env of samplePoints(names)) {
    const a = evaluate(x, env);
    const b = evaluate(y, env);
    if (!Number.isFinite(a) || !Number.isFinite(b)) continue;
    if (a === 0 || b === 0) {
      if (a !== b) return false;
      continue;
    }
    const r = a / b;
    if (ratio === null) ratio = r;
    else if (!close(r, ratio)) return false;
    valid++;
  }
  return ratio !== null && valid >= 3;
}
