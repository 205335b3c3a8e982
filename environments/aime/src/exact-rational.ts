import { scanTokens } from "./scan-tokens.ts";

/** An exact rational, `den > 0`, in lowest terms. */
export interface Rational {
  num: bigint;
  den: bigint;
}

const MAX_EXPONENT = 1024n;
const MAX_DIGITS = 400;

/**
 * Evaluates plain arithmetic LaTeX (integers, decimals, + - * / ^, `\frac`, `\cdot`, `\times`, `\div`,
 * parentheses, braces) exactly. Returns null for anything else (variables, radicals, huge powers), so
 * the caller can fall back to other means. No eval, no floats.
 */
export function evaluateExact(source: string): Rational | null {
  const tokens = tokenize(source);
  if (tokens === null || tokens.length === 0) return null;
  const p = new Parser(tokens);
  const value = p.parseExpression();
  if (value === null || !p.atEnd()) return null;
  return value;
}

/** The integer `source` denotes exactly (`033`, `\frac{84}{2}`, `42.0`), or null. */
export function evaluateExactInteger(source: string): bigint | null {
  const r = evaluateExact(source);
  return r !== null && r.den === 1n ? r.num : null;
}

type Token = { t: "num"; v: Rational } | { t: "op"; v: string };

function tokenize(s: string): Token[] | null {
  return scanTokens<Token>(s, (rest) => {
    if (rest[0] === " ") return { token: null, length: 1 };
    const num = /^(\d+)(?:\.(\d+))?|^\.(\d+)/.exec(rest);
    if (num !== null) {
      const whole = num[1] ?? "0";
      const frac = num[2] ?? num[3] ?? "";
      if (whole.length + frac.length > MAX_DIGITS) return null;
      return { token: { t: "num", v: reduce(BigInt(whole + frac), 10n ** BigInt(frac.length)) }, length: num[0].length };
    }
    const cmd = /^\\(frac|cdot|times|div)(?![A-Za-z])/.exec(rest);
    if (cmd !== null) return { token: { t: "op", v: `\\${cmd[1]}` }, length: cmd[0].length };
    return "+-*/^(){}[]".includes(rest[0]!) ? { token: { t: "op", v: rest[0]! }, length: 1 } : null;
  });
}

/** Deeper nesting than this is no answer anyone writes; it must not exhaust the stack. */
const MAX_DEPTH = 100;

class Parser {
  private pos = 0;
  private depth = 0;
  constructor(private readonly tokens: Token[]) {}

  atEnd(): boolean {
    return this.pos >= this.tokens.length;
  }

  private peekOp(): string | null {
    const t = this.tokens[this.pos];
    return t?.t === "op" ? t.v : null;
  }

  parseExpression(): Rational | null {
    if (++this.depth > MAX_DEPTH) return null;
    const value = this.parseSum();
    this.depth--;
    return value;
  }

  private parseSum(): Rational | null {
    let left = this.parseTerm();
    while (left !== null) {
      const op = this.peekOp();
      if (op !== "+" && op !== "-") break;
      this.pos++;
      const right = this.parseTerm();
      if (right === null) return null;
      left = op === "+" ? add(left, right) : add(left, negate(right));
    }
    return left;
  }

  private parseTerm(): Rational | null {
    let left = this.parseUnary();
    while (left !== null) {
      const op = this.peekOp();
      if (op === "*" || op === "\\cdot" || op === "\\times") {
        this.pos++;
        const right = this.parseUnary();
        if (right === null) return null;
        left = multiply(left, right);
      } else if (op === "/" || op === "\\div") {
        this.pos++;
        const right = this.parseUnary();
        if (right === null || right.num === 0n) return null;
        left = multiply(left, invert(right));
      } else break;
    }
    return left;
  }

  private parseUnary(): Rational | null {
    const op = this.peekOp();
    if (op === "-" || op === "+") {
      this.pos++;
      if (++this.depth > MAX_DEPTH) return null;
      const v = this.parseUnary();
      this.depth--;
      return v === null ? null : op === "-" ? negate(v) : v;
    }
    return this.parsePower();
  }

  private parsePower(): Rational | null {
    const base = this.parseAtom();
    if (base === null || this.peekOp() !== "^") return base;
    this.pos++;
    const exp = this.parseAtom();
    if (exp === null || exp.den !== 1n) return null;
    const e = exp.num < 0n ? -exp.num : exp.num;
    if (e > MAX_EXPONENT) return null;
    if (base.num === 0n && exp.num < 0n) return null;
    const powered = { num: base.num ** e, den: base.den ** e };
    if (powered.num.toString().length > MAX_DIGITS) return null;
    return exp.num < 0n ? invert(powered) : powered;
  }

  private parseAtom(): Rational | null {
    const t = this.tokens[this.pos];
    if (t === undefined) return null;
    if (t.t === "num") {
      this.pos++;
      return t.v;
    }
    if (t.v === "\\frac") {
      this.pos++;
      const a = this.parseFracArgument();
      const b = a === null ? null : this.parseFracArgument();
      if (a === null || b === null || b.num === 0n) return null;
      return multiply(a, invert(b));
    }
    const close = t.v === "(" ? ")" : t.v === "{" ? "}" : t.v === "[" ? "]" : null;
    if (close === null) return null;
    this.pos++;
    const inner = this.parseExpression();
    if (inner === null || this.peekOp() !== close) return null;
    this.pos++;
    return inner;
  }

  /** `\frac{a}{b}`, or `\frac3{4}`: a brace-less argument is one number token (`normalizeAnswer` turns `\frac12` into `\frac{1}{2}`). */
  private parseFracArgument(): Rational | null {
    const t = this.tokens[this.pos];
    if (t?.t === "op" && t.v === "{") return this.parseAtom();
    if (t?.t !== "num") return null;
    return this.parseAtom();
  }
}

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

function reduce(num: bigint, den: bigint): Rational {
  const sign = den < 0n ? -1n : 1n;
  const g = gcd(num, den) || 1n;
  return { num: (sign * num) / g, den: (sign * den) / g };
}

function add(a: Rational, b: Rational): Rational {
  return reduce(a.num * b.den + b.num * a.den, a.den * b.den);
}

function multiply(a: Rational, b: Rational): Rational {
  return reduce(a.num * b.num, a.den * b.den);
}

function negate(a: Rational): Rational {
  return { num: -a.num, den: a.den };
}

function invert(a: Rational): Rational {
  return reduce(a.den, a.num);
}
