/** A parsed countdown expression: its exact value (null on division by zero) and the numbers it used. */
export interface Evaluated {
  value: { num: number; den: number } | null;
  numbers: number[];
}

const MAX_LENGTH = 200;

/** Parses `+ - * / ( )` over non-negative integers, by recursive descent; never evaluates code. Null if malformed. */
export function evaluateExpression(source: string): Evaluated | null {
  const text = source.trim().replace(/[×x]/g, "*").replace(/÷/g, "/");
  if (text === "" || text.length > MAX_LENGTH || !/^[\d\s+\-*/()]+$/.test(text)) return null;
  const tokens = text.match(/\d+|[+\-*/()]/g) ?? [];
  let pos = 0;
  const numbers: number[] = [];
  let divByZero = false;

  /** One precedence level: operands joined by `ops`, folded from the left by `apply`; null when an operand is missing. */
  const level = (ops: readonly string[], operand: () => Frac | null, apply: (op: string, left: Frac, right: Frac) => Frac) => (): Frac | null => {
    let left = operand();
    while (left !== null && ops.includes(tokens[pos] ?? "")) {
      const op = tokens[pos++]!;
      const right = operand();
      if (right === null) return null;
      left = apply(op, left, right);
    }
    return left;
  };
  const atom = (): Frac | null => {
    const t = tokens[pos];
    if (t === undefined) return null;
    if (t === "(") {
      pos++;
      const inner = expr();
      if (inner === null || tokens[pos] !== ")") return null;
      pos++;
      return inner;
    }
    if (!/^\d+$/.test(t) || t.length > 4) return null;
    pos++;
    numbers.push(Number(t));
    return { num: Number(t), den: 1 };
  };

  const term = level(["*", "/"], atom, (op, left, right) => {
    if (op === "*") return mulF(left, right);
    if (right.num !== 0) return mulF(left, { num: right.den, den: right.num });
    divByZero = true;
    return { num: 0, den: 1 };
  });
  const expr = level(["+", "-"], term, (op, left, right) => addF(left, op === "+" ? right : { num: -right.num, den: right.den }));

  const value = expr();
  if (value === null || pos !== tokens.length) return null;
  return { value: divByZero ? null : value, numbers };
}

interface Frac {
  num: number;
  den: number;
}

function gcd(a: number, b: number): number {
  let x = Math.abs(a);
  let y = Math.abs(b);
  while (y !== 0) [x, y] = [y, x % y];
  return x || 1;
}

function norm(num: number, den: number): Frac {
  const s = den < 0 ? -1 : 1;
  const g = gcd(num, den);
  return { num: (s * num) / g, den: (s * den) / g };
}

function addF(a: Frac, b: Frac): Frac {
  return norm(a.num * b.den + b.num * a.den, a.den * b.den);
}

function mulF(a: Frac, b: Frac): Frac {
  return norm(a.num * b.num, a.den * b.den);
}
