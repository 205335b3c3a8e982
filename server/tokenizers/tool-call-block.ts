/** What is known of a `<tool_call>` block's JSON object, read as far as it is written. */
export interface ToolCallBlock {
  /** The `name` member's string, once written whole. */
  name: string | null;
  /**
   * The `arguments` member's value: where it begins in the block's text, whether it is an object or an
   * array (text that grows only at its end) or another value, and where it ends (null: not yet written whole).
   */
  args: { start: number; end: number | null; kind: "container" | "other" } | null;
  /** The object is written whole. */
  closed: boolean;
  /** Not the start of a JSON object, or `name` or `arguments` written twice (JSON.parse keeps the last). */
  broken: boolean;
}

const WS = new Set([" ", "\t", "\n", "\r"]);
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);
const HEX = /^[0-9a-fA-F]$/;
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
/** A number that more characters may still complete. */
const NUMBER_PREFIX = /^-?(?:0|[1-9]\d*)?(?:\.\d*)?(?:[eE][+-]?\d*)?$/;
const LITERALS = ["true", "false", "null"];

/** Where the string that opens at `at` ends (after its quote), -1 when it is not written whole, -2 when it is no JSON string. */
function stringEnd(s: string, at: number): number {
  for (let i = at + 1; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20) return -2;
    if (c !== 0x5c) continue;
    if (i + 1 >= s.length) return -1;
    const e = s[i + 1]!;
    if (e === "u") {
      for (let k = 2; k < 6; k++) {
        if (i + k >= s.length) return -1;
        if (!HEX.test(s[i + k]!)) return -2;
      }
      i += 5;
    } else if (ESCAPES.has(e)) i++;
    else return -2;
  }
  return -1;
}

/** Where the number or literal that begins at `at` ends, -1 when more may follow, -2 when it is none. */
function scalarEnd(s: string, at: number): number {
  let i = at;
  while (i < s.length && !WS.has(s[i]!) && !",]}".includes(s[i]!)) i++;
  const word = s.slice(at, i);
  const open = i === s.length;
  if (LITERALS.includes(word)) return open ? -1 : i;
  if (open && LITERALS.some((l) => l.startsWith(word))) return -1;
  if (NUMBER.test(word)) return open ? -1 : i;
  return open && NUMBER_PREFIX.test(word) ? -1 : -2;
}

/**
 * Reads a `<tool_call>` block's text (`{"name": .., "arguments": ..}`) as far as it is written: a streamed
 * generation sends a tool call's arguments as they come, and the finished reply gives the same text.
 * Validates as it goes; nesting is kept on a list, not on the call stack.
 */
export function readToolCallBlock(text: string): ToolCallBlock {
  const block: ToolCallBlock = { name: null, args: null, closed: false, broken: false };
  const broken = () => ({ ...block, broken: true });
  let i = 0;
  const skip = () => {
    while (i < text.length && WS.has(text[i]!)) i++;
  };
  // whole, and nothing but whitespace after it
  const closed = () => {
    skip();
    return i === text.length ? { ...block, closed: true } : broken();
  };
  skip();
  if (i === text.length) return block;
  if (text[i] !== "{") return broken();
  i++;
  // containers open below the top object: true for an object
  const stack: boolean[] = [];
  // what comes next: a key (or the end of an empty object), a colon, a value, a comma or the end
  let expect: "key" | "key-or-end" | "colon" | "value" | "value-or-end" | "comma-or-end" = "key-or-end";
  let key: string | null = null;
  const seen = new Set<string>();
  // a container below the top object closed: the arguments end with it when they are that container
  const pop = () => {
    stack.pop();
    if (stack.length === 0 && key === "arguments") block.args!.end = i;
    expect = "comma-or-end";
  };
  for (;;) {
    skip();
    if (i === text.length) return block;
    const c = text[i]!;
    const top = stack.length === 0;
    if (expect === "key" || expect === "key-or-end") {
      if (c === "}" && expect === "key-or-end") {
        i++;
        if (top) return closed();
        pop();
        continue;
      }
      if (c !== '"') return broken();
      const end = stringEnd(text, i);
      if (end === -2) return broken();
      if (end === -1) return block;
      if (top) {
        key = JSON.parse(text.slice(i, end)) as string;
        if ((key === "name" || key === "arguments") && seen.has(key)) return broken();
        seen.add(key);
      }
      i = end;
      expect = "colon";
      continue;
    }
    if (expect === "colon") {
      if (c !== ":") return broken();
      i++;
      expect = "value";
      continue;
    }
    if (expect === "comma-or-end") {
      const inObject = top || stack[stack.length - 1]!;
      if (c === ",") {
        i++;
        expect = inObject ? "key" : "value";
        continue;
      }
      if (c !== (inObject ? "}" : "]")) return broken();
      i++;
      if (top) return closed();
      pop();
      continue;
    }
    // a value
    if (c === "]" && expect === "value-or-end") {
      i++;
      pop();
      continue;
    }
    if (top && key === "arguments") block.args = { start: i, end: null, kind: c === "{" || c === "[" ? "container" : "other" };
    if (c === "{" || c === "[") {
      stack.push(c === "{");
      i++;
      expect = c === "{" ? "key-or-end" : "value-or-end";
      continue;
    }
    const end = c === '"' ? stringEnd(text, i) : scalarEnd(text, i);
    if (end === -2) return broken();
    if (end === -1) return block;
    if (top && key === "name" && c === '"') block.name = JSON.parse(text.slice(i, end)) as string;
    if (top && key === "arguments") block.args!.end = end;
    i = end;
    expect = "comma-or-end";
  }
}
