import type { Callable, Namespace, Value } from "./values.ts";

/** Whether a value is a function or a namespace (`apis`, an app) rather than data. */
export function isSpecial(v: Value): v is Callable | Namespace {
  return !!v && typeof v === "object" && !Array.isArray(v) && "kind" in v && ((v as Callable).kind === "callable" || (v as Namespace).kind === "namespace");
}

function pyNumber(n: number): string {
  return String(n);
}

/** Python's `json.dumps(v)` (separators ", " and ": "), or with `indent` its indented form. */
export function jsonDumps(v: Value, indent?: number, level = 0): string {
  if (v === null) return "null";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "number") return pyNumber(v);
  if (typeof v === "string") return JSON.stringify(v).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  if (isSpecial(v)) return JSON.stringify(`<${v.kind} ${v.name}>`);
  const pad = indent === undefined ? "" : `\n${" ".repeat(indent * (level + 1))}`;
  const close = indent === undefined ? "" : `\n${" ".repeat(indent * level)}`;
  const sep = indent === undefined ? ", " : ",";
  if (Array.isArray(v)) {
    if (v.length === 0) return "[]";
    return `[${v.map((x) => pad + jsonDumps(x, indent, level + 1)).join(sep)}${close}]`;
  }
  const entries = Object.entries(v);
  if (entries.length === 0) return "{}";
  return `{${entries.map(([k, x]) => `${pad}${JSON.stringify(k)}: ${jsonDumps(x, indent, level + 1)}`).join(sep)}${close}}`;
}

/** Python's `repr` of a value. */
export function pyRepr(v: Value): string {
  if (v === null) return "None";
  if (typeof v === "boolean") return v ? "True" : "False";
  if (typeof v === "number") return pyNumber(v);
  if (typeof v === "string") return v.includes("'") && !v.includes('"') ? `"${v}"` : `'${v.replace(/\\/g, "\\\\").replace(/'/g, "\\'").replace(/\n/g, "\\n")}'`;
  if (isSpecial(v)) return `<${v.kind === "callable" ? "function" : "module"} ${v.name}>`;
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(", ")}]`;
  return `{${Object.entries(v).map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`).join(", ")}}`;
}

/**
 * What `print(*args)` writes in AppWorld's shell: a single list or dict as JSON (indented by 1 once its
 * compact form reaches 100 characters), anything else as Python's `str` of each argument.
 */
export function formatPrint(args: Value[], asPrint: boolean): string {
  const [only] = args;
  if (asPrint && args.length === 1 && only !== null && typeof only === "object" && !isSpecial(only as Value)) {
    const compact = jsonDumps(only as Value);
    return compact.length >= 100 ? jsonDumps(only as Value, 1) : compact;
  }
  return args.map((a) => (typeof a === "string" ? a : pyRepr(a))).join(" ");
}
