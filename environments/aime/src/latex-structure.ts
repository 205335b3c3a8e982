/** Reading the structure of a normalised answer: top-level splits, labels, collections, matrices, relations. */

/** Splits on `sep` (a character or a command such as `\cup`) outside any brackets; `\{`/`\}` count as brackets. */
export function splitTopLevel(s: string, sep: string): string[] {
  if (!s.includes(sep)) return [s.trim()];
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (depth === 0 && s.startsWith(sep, i) && (!sep.startsWith("\\") || !/[A-Za-z]/.test(s[i + sep.length] ?? ""))) {
      out.push(s.slice(start, i).trim());
      start = i + sep.length;
      i += sep.length - 1;
      continue;
    }
    if (ch === "\\") {
      const next = s[i + 1];
      if (next === "{") depth++;
      else if (next === "}") depth--;
      else if (next !== undefined && /[A-Za-z]/.test(next)) {
        const m = /^\\[A-Za-z]+/.exec(s.slice(i))!;
        const word = m[0];
        if (word === "\\begin") depth++;
        else if (word === "\\end") depth--;
        i += word.length - 1;
        continue;
      }
      i++;
      continue;
    }
    if ("([{".includes(ch)) depth++;
    else if (")]}".includes(ch)) depth--;
  }
  out.push(s.slice(start).trim());
  return out;
}

export function balanced(s: string): boolean {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === "\\") {
      i++;
      continue;
    }
    if ("([{".includes(ch)) depth++;
    else if (")]}".includes(ch)) depth--;
    if (depth < 0) return false;
  }
  return depth === 0;
}

const CONSTANT_COMMANDS = new Set(["\\pi", "\\infty", "\\e"]);
const SIMPLE_LABEL = /^(?:[A-Za-z]|\\[A-Za-z]+)(?:_\{?[A-Za-z0-9]+\}?)?'*$/;

/**
 * A name an answer is given under: `x`, `a_1`, `\theta`, `AB`, `|AB|`, `\angle ABC`, `f(x)`, `P(A)`,
 * or a tuple of them (`(p, q)`). Not an expression such as `m+n` or `a+3z`.
 */
export function isLabel(raw: string): boolean {
  const s = raw.trim();
  if (SIMPLE_LABEL.test(s)) return !CONSTANT_COMMANDS.has(s);
  if (/^[A-Z]{2,3}$/.test(s) || /^\|[A-Za-z]{1,3}\|$/.test(s) || /^\\(?:angle|overline)\s*\{?[A-Z]{1,3}\}?$/.test(s)) return true;
  if (/^[A-Za-z](?:_\{?\w+\}?)?\([A-Za-z0-9]{1,3}\)$/.test(s)) return true;
  // Ratios of named quantities: `A:B`, `V_1:V_2`, `\frac{NO}{BO}`.
  const ratio = /^(.+?):(.+)$/.exec(s) ?? /^\\frac\{([^{}]+)\}\{([^{}]+)\}$/.exec(s);
  if (ratio !== null) return isLabel(ratio[1]!) && isLabel(ratio[2]!);
  if (s.startsWith("(") && s.endsWith(")")) {
    const items = splitTopLevel(s.slice(1, -1), ",");
    return items.length > 1 && items.every((it) => SIMPLE_LABEL.test(it) && !CONSTANT_COMMANDS.has(it));
  }
  return false;
}

export interface Collection {
  open: string;
  close: string;
  items: string[];
}

const PAIRS: Record<string, string[]> = { "(": [")", "]"], "[": [")", "]"], "\\{": ["\\}"], "{": ["}"] };

/** `(1, 2)`, `[0, 1)`, `\{1, 2\}`, or a bare top-level list `1, 2` / `1; 2` / `1 and 2` (unordered answers). */
export function readCollection(s: string, extraSeparators: readonly string[] = []): Collection | null {
  if (!/[,;]|\\\{| and /.test(s) && !extraSeparators.some((sep) => s.includes(sep))) return null;
  for (const [open, closes] of Object.entries(PAIRS)) {
    if (!s.startsWith(open)) continue;
    for (const close of closes) {
      if (!s.endsWith(close)) continue;
      const inner = s.slice(open.length, s.length - close.length);
      if (!balanced(inner) || (open !== "\\{" && /\\[{}]/.test(inner) && !balancedEscaped(inner))) continue;
      // `(0;0;6)`: a tuple may separate its items with semicolons.
      let items = splitTopLevel(inner, ",");
      if (items.length === 1 && open !== "{") items = splitTopLevel(inner, ";");
      // A braced group `{1,2,3}` is a set; `{x}` alone is only grouping.
      if (open === "{") return items.length > 1 ? { open: "\\{", close: "\\}", items } : null;
      if (items.length > 1 || open === "\\{") return { open, close, items };
    }
  }
  for (const sep of [",", ";", " and ", ...extraSeparators]) {
    const items = splitTopLevel(s, sep).filter((x) => x !== "");
    if (items.length > 1) return { open: "", close: "", items: items.flatMap((it) => nestedListItems(it, extraSeparators)) };
  }
  return null;
}

/** `1, 2 and 3`: a member that is itself a bare list contributes its members. */
function nestedListItems(item: string, extraSeparators: readonly string[]): string[] {
  const inner = readCollection(item, extraSeparators);
  return inner !== null && inner.open === "" ? inner.items : [item];
}

function balancedEscaped(s: string): boolean {
  return (s.match(/\\\{/g) ?? []).length === (s.match(/\\\}/g) ?? []).length;
}

/** Rows of cells of a `pmatrix` / `bmatrix` / `matrix` / `array`, optionally inside `[...]` or `(...)`. */
export function readMatrix(raw: string): string[][] | null {
  let s = raw.trim();
  if ((s.startsWith("[") && s.endsWith("]")) || (s.startsWith("(") && s.endsWith(")"))) s = s.slice(1, -1).trim();
  const m = /^\\begin\{(pmatrix|bmatrix|Bmatrix|matrix|smallmatrix|array)\}(?:\{[^}]*\})?([\s\S]*)\\end\{\1\}$/.exec(s);
  if (m === null) return null;
  const rows = m[2]!
    .split(/\\\\/)
    .map((r) => r.trim())
    .filter((r) => r !== "" && r !== "\\hline");
  return rows.map((r) => r.split("&").map((c) => c.trim()));
}

export type RelationOp = "<" | "\\le" | ">" | "\\ge" | "\\ne";

export interface Relation {
  sides: string[];
  ops: RelationOp[];
}

const RELATION = /\\le\b|\\ge\b|\\ne\b|<|>/g;

/** `5 < x`, `a \le x < b`: the sides and operators of an (in)equation chain; `>`/`\ge` flipped to `<`/`\le`. */
export function readRelation(s: string): Relation | null {
  const sides: string[] = [];
  const ops: RelationOp[] = [];
  let last = 0;
  RELATION.lastIndex = 0;
  for (let m = RELATION.exec(s); m !== null; m = RELATION.exec(s)) {
    sides.push(s.slice(last, m.index).trim());
    ops.push(m[0] as RelationOp);
    last = m.index + m[0].length;
  }
  if (ops.length === 0) return null;
  sides.push(s.slice(last).trim());
  if (sides.some((x) => x === "" || !balanced(x))) return null;
  if (ops.every((o) => o === ">" || o === "\\ge")) {
    return { sides: sides.reverse(), ops: ops.reverse().map((o) => (o === ">" ? "<" : "\\le")) };
  }
  return { sides, ops };
}

/** `x > 5` -> `(5, \infty)`, `-793 < a < 10` -> `(-793, 10)`: a one-variable inequality as an interval. */
export function relationToInterval(r: Relation): Collection | null {
  if (r.ops.includes("\\ne") || !r.ops.every((o) => o === "<" || o === "\\le")) return null;
  if (r.sides.length === 3 && isLabel(r.sides[1]!)) {
    return { open: r.ops[0] === "<" ? "(" : "[", close: r.ops[1] === "<" ? ")" : "]", items: [r.sides[0]!, r.sides[2]!] };
  }
  if (r.sides.length !== 2) return null;
  const [a, b] = r.sides as [string, string];
  const strict = r.ops[0] === "<";
  if (isLabel(a)) return { open: "(", close: strict ? ")" : "]", items: ["-\\infty", b] };
  if (isLabel(b)) return { open: strict ? "(" : "[", close: ")", items: [a, "\\infty"] };
  return null;
}
