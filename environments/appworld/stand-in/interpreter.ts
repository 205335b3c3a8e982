import { formatPrint, isSpecial } from "./python-format.ts";
import type { Callable, Namespace, Value } from "./values.ts";

/**
 * The code subset the stand-in runs instead of Python (parsed, never evaluated as JS): one statement per
 * line (brackets may span lines), `#` comments, `name = expr` or `expr`. An expression is a literal
 * (string, int, float, True/False/None, list, dict), a variable, `x.attr`, `x[index]`, or a call
 * `f(a, k=v)`. Callables: `print`, `len`, `str`, `int`, and the apps under `apis`.
 */

export type { Callable, Namespace, Value } from "./values.ts";

/** A Python-style exception raised inside the stand-in's code: its name and message make the traceback. */
export class PyError extends Error {
  constructor(
    readonly pyName: string,
    message: string,
  ) {
    super(message);
  }
}

class SubsetSyntaxError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

type Token =
  | { t: "name"; v: string; line: number }
  | { t: "str"; v: string; line: number }
  | { t: "num"; v: number; line: number }
  | { t: "op"; v: string; line: number }
  | { t: "nl"; line: number };

type Expr =
  | { k: "lit"; v: Value }
  | { k: "var"; name: string }
  | { k: "attr"; obj: Expr; name: string }
  | { k: "index"; obj: Expr; index: Expr }
  | { k: "call"; fn: Expr; args: Expr[]; kwargs: Array<[string, Expr]> }
  | { k: "list"; items: Expr[] }
  | { k: "dict"; entries: Array<[Expr, Expr]> };

interface Stmt {
  line: number;
  target?: string;
  expr: Expr;
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", "\\": "\\", "'": "'", '"': '"', r: "\r", "0": "\0" };

function tokenize(code: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  let line = 1;
  let depth = 0;
  while (i < code.length) {
    const c = code[i]!;
    if (c === "\n") {
      if (depth === 0) out.push({ t: "nl", line });
      line++;
      i++;
    } else if (c === " " || c === "\t" || c === "\r") i++;
    else if (c === "#") while (i < code.length && code[i] !== "\n") i++;
    else if (c === '"' || c === "'") {
      let s = "";
      i++;
      while (i < code.length && code[i] !== c) {
        if (code[i] === "\n") throw new SubsetSyntaxError(line, "unterminated string literal");
        if (code[i] === "\\") {
          const e = code[i + 1] ?? "";
          s += ESCAPES[e] ?? `\\${e}`;
          i += 2;
        } else s += code[i++];
      }
      if (i >= code.length) throw new SubsetSyntaxError(line, "unterminated string literal");
      i++;
      out.push({ t: "str", v: s, line });
    } else if (/[0-9]/.test(c) || (c === "-" && /[0-9]/.test(code[i + 1] ?? "") && !isValueEnd(out.at(-1)))) {
      const m = /^-?[0-9]+(\.[0-9]+)?/.exec(code.slice(i))!;
      out.push({ t: "num", v: Number(m[0]), line });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(code.slice(i))!;
      out.push({ t: "name", v: m[0], line });
      i += m[0].length;
    } else if ("()[]{},:.=".includes(c)) {
      if ("([{".includes(c)) depth++;
      if (")]}".includes(c)) depth = Math.max(0, depth - 1);
      out.push({ t: "op", v: c, line });
      i++;
    } else throw new SubsetSyntaxError(line, `invalid syntax ('${c}' is not in the stand-in's code subset)`);
  }
  out.push({ t: "nl", line });
  return out;
}

function isValueEnd(t: Token | undefined): boolean {
  return !!t && (t.t === "name" || t.t === "num" || t.t === "str" || (t.t === "op" && ")]}".includes(t.v)));
}

class Parser {
  #i = 0;
  constructor(private readonly tokens: Token[]) {}

  program(): Stmt[] {
    const stmts: Stmt[] = [];
    while (this.#i < this.tokens.length) {
      const t = this.#peek();
      if (t.t === "nl") {
        this.#i++;
        continue;
      }
      const next = this.tokens[this.#i + 1];
      if (t.t === "name" && next?.t === "op" && next.v === "=") {
        this.#i += 2;
        stmts.push({ line: t.line, target: t.v, expr: this.#expr() });
      } else stmts.push({ line: t.line, expr: this.#expr() });
      const end = this.#peek();
      if (end.t !== "nl") throw new SubsetSyntaxError(end.line, "invalid syntax (one statement per line)");
    }
    return stmts;
  }

  #peek(): Token {
    return this.tokens[this.#i] ?? { t: "nl", line: 0 };
  }

  #isOp(v: string): boolean {
    const t = this.#peek();
    return t.t === "op" && t.v === v;
  }

  #expect(v: string): void {
    if (!this.#isOp(v)) throw new SubsetSyntaxError(this.#peek().line, `invalid syntax (expected '${v}')`);
    this.#i++;
  }

  #expr(): Expr {
    let e = this.#primary();
    for (;;) {
      if (this.#isOp(".")) {
        this.#i++;
        const t = this.#peek();
        if (t.t !== "name") throw new SubsetSyntaxError(t.line, "invalid syntax (expected a name after '.')");
        this.#i++;
        e = { k: "attr", obj: e, name: t.v };
      } else if (this.#isOp("[")) {
        this.#i++;
        const index = this.#expr();
        this.#expect("]");
        e = { k: "index", obj: e, index };
      } else if (this.#isOp("(")) {
        this.#i++;
        e = this.#call(e);
      } else return e;
    }
  }

  #call(fn: Expr): Expr {
    const args: Expr[] = [];
    const kwargs: Array<[string, Expr]> = [];
    while (!this.#isOp(")")) {
      const t = this.#peek();
      const next = this.tokens[this.#i + 1];
      if (t.t === "name" && next?.t === "op" && next.v === "=") {
        this.#i += 2;
        kwargs.push([t.v, this.#expr()]);
      } else {
        if (kwargs.length) throw new SubsetSyntaxError(t.line, "positional argument follows keyword argument");
        args.push(this.#expr());
      }
      if (!this.#isOp(")")) this.#expect(",");
    }
    this.#i++;
    return { k: "call", fn, args, kwargs };
  }

  #primary(): Expr {
    const t = this.#peek();
    this.#i++;
    if (t.t === "str") return { k: "lit", v: t.v };
    if (t.t === "num") return { k: "lit", v: t.v };
    if (t.t === "name") {
      if (t.v === "True") return { k: "lit", v: true };
      if (t.v === "False") return { k: "lit", v: false };
      if (t.v === "None") return { k: "lit", v: null };
      return { k: "var", name: t.v };
    }
    if (t.t === "op" && t.v === "(") {
      const e = this.#expr();
      this.#expect(")");
      return e;
    }
    if (t.t === "op" && t.v === "[") {
      const items: Expr[] = [];
      while (!this.#isOp("]")) {
        items.push(this.#expr());
        if (!this.#isOp("]")) this.#expect(",");
      }
      this.#i++;
      return { k: "list", items };
    }
    if (t.t === "op" && t.v === "{") {
      const entries: Array<[Expr, Expr]> = [];
      while (!this.#isOp("}")) {
        const key = this.#expr();
        this.#expect(":");
        entries.push([key, this.#expr()]);
        if (!this.#isOp("}")) this.#expect(",");
      }
      this.#i++;
      return { k: "dict", entries };
    }
    throw new SubsetSyntaxError(t.line, "invalid syntax");
  }
}

function typeName(v: Value): string {
  if (v === null) return "NoneType";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float";
  if (typeof v === "string") return "str";
  if (Array.isArray(v)) return "list";
  if (isSpecial(v)) return v.kind === "callable" ? "function" : "module";
  return "dict";
}

function evaluate(e: Expr, scope: Map<string, Value>): Value {
  switch (e.k) {
    case "lit":
      return e.v;
    case "var": {
      if (!scope.has(e.name)) throw new PyError("NameError", `name '${e.name}' is not defined`);
      return scope.get(e.name)!;
    }
    case "attr": {
      const obj = evaluate(e.obj, scope);
      if (isSpecial(obj) && obj.kind === "namespace") {
        const ns = obj;
        const member = ns.members[e.name];
        if (member === undefined) throw new PyError("AttributeError", `'${ns.name}' has no attribute '${e.name}'`);
        return member;
      }
      throw new PyError("AttributeError", `'${typeName(obj)}' object has no attribute '${e.name}'`);
    }
    case "index": {
      const obj = evaluate(e.obj, scope);
      const index = evaluate(e.index, scope);
      if (Array.isArray(obj)) {
        if (typeof index !== "number" || !Number.isInteger(index)) throw new PyError("TypeError", "list indices must be integers");
        const at = index < 0 ? obj.length + index : index;
        if (at < 0 || at >= obj.length) throw new PyError("IndexError", "list index out of range");
        return obj[at]!;
      }
      if (obj && typeof obj === "object" && !isSpecial(obj)) {
        const key = typeof index === "string" ? index : JSON.stringify(index);
        const dict = obj as Record<string, Value>;
        if (!Object.hasOwn(dict, key)) throw new PyError("KeyError", `'${key}'`);
        return dict[key]!;
      }
      throw new PyError("TypeError", `'${typeName(obj)}' object is not subscriptable`);
    }
    case "call": {
      const fn = evaluate(e.fn, scope);
      if (!isSpecial(fn) || fn.kind !== "callable") throw new PyError("TypeError", `'${typeName(fn)}' object is not callable`);
      const args = e.args.map((a) => evaluate(a, scope));
      const kwargs: Record<string, Value> = {};
      for (const [k, v] of e.kwargs) kwargs[k] = evaluate(v, scope);
      return fn.call(args, kwargs);
    }
    case "list":
      return e.items.map((i) => evaluate(i, scope));
    case "dict": {
      const out: Record<string, Value> = {};
      for (const [k, v] of e.entries) {
        const key = evaluate(k, scope);
        out[typeof key === "string" ? key : JSON.stringify(key)] = evaluate(v, scope);
      }
      return out;
    }
  }
}

function builtin(name: string, call: Callable["call"]): Callable {
  return { kind: "callable", name, call };
}

/** A stateful shell: variables persist across `run` calls, like AppWorld's IPython shell. */
export class SubsetShell {
  readonly #scope = new Map<string, Value>();

  constructor(globals: Record<string, Value>) {
    for (const [k, v] of Object.entries(globals)) this.#scope.set(k, v);
    this.#scope.set("len", builtin("len", ([x]) => {
      if (typeof x === "string" || Array.isArray(x)) return x.length;
      if (x && typeof x === "object" && !isSpecial(x)) return Object.keys(x).length;
      throw new PyError("TypeError", `object of type '${typeName(x ?? null)}' has no len()`);
    }));
    this.#scope.set("str", builtin("str", ([x]) => formatPrint([x ?? ""], false)));
    this.#scope.set("int", builtin("int", ([x]) => {
      const n = typeof x === "string" ? Number(x.trim()) : typeof x === "number" ? x : Number.NaN;
      if (!Number.isFinite(n)) throw new PyError("ValueError", `invalid literal for int(): ${JSON.stringify(x)}`);
      return Math.trunc(n);
    }));
  }

  /** Runs `code`; returns AppWorld's output text: the printed lines, or a failure with a traceback. */
  run(code: string): string {
    const lines = code.split("\n");
    let stmts: Stmt[];
    try {
      stmts = new Parser(tokenize(code)).program();
    } catch (err) {
      if (!(err instanceof SubsetSyntaxError)) throw err;
      return `Execution failed. Traceback:\nSyntax error in line:\n${(lines[err.line - 1] ?? "").trimEnd()}\nMessage: ${err.message}`;
    }
    let printed = "";
    const print = builtin("print", (args) => {
      printed += `${formatPrint(args, true)}\n`;
      return null;
    });
    this.#scope.set("print", print);
    for (const stmt of stmts) {
      try {
        const value = evaluate(stmt.expr, this.#scope);
        if (stmt.target) this.#scope.set(stmt.target, value);
      } catch (err) {
        if (!(err instanceof PyError)) throw err;
        const trace = `  File "<python-input>", line ${stmt.line}, in <module>\n    ${(lines[stmt.line - 1] ?? "").trim()}\n${err.pyName}: ${err.message}`;
        return `Execution failed. Traceback:\n${trace}`;
      }
    }
    return printed.trim() ? printed : "Execution successful.";
  }
}
