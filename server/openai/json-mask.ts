import type { TokenMask } from "../engines/engine.ts";
import type { Tokenizer } from "../tokenizers/tokenizer.ts";
import { HttpError } from "./errors.ts";
import { type SortedPieces, sortPieces, walkPieces } from "./sorted-pieces.ts";
import { completionOf, splitUtf8, startsWithBytes, utf8Length } from "./utf8-prefix.ts";

/**
 * Structured output for in-process engines: a JSON schema compiled to a small grammar, matched
 * character by character by a nondeterministic stack machine (a tool call's markers: as whole tokens),
 * and turned into a per-token mask. The mask also keeps the output short enough to finish: a token is
 * allowed only if the shortest completion after it still fits the tokens left. Output is compact JSON
 * (no whitespace); object keys come in the schema's order.
 */
export type Grammar =
  | { k: "object"; props: Array<{ key: string; g: Grammar; required: boolean }> }
  | { k: "open-object" }
  | { k: "array"; items: Grammar; min: number; max: number }
  | { k: "string"; min: number; max: number }
  | { k: "number"; integer: boolean }
  | { k: "literal"; text: string }
  | { k: "any" }
  | { k: "union"; options: Grammar[] };

const IGNORED = new Set(["description", "title", "default", "examples", "$schema", "additionalProperties", "strict", "$comment", "deprecated", "readOnly", "writeOnly", "nullable", "$id"]);
const MAX_DEPTH = 32;

function unsupported(param: string, path: string, what: string): never {
  throw new HttpError(400, "AJ_ERR_UNSUPPORTED_PARAMETER", `${param}: schema ${path || "(root)"}: ${what} cannot be enforced`, { param });
}

/** Compiles a JSON schema (the subset that can be enforced token by token) or answers a 400 naming `param`. */
export function toJsonGrammar(schema: unknown, param: string): Grammar {
  const compile = (s: unknown, path: string, depth: number): Grammar => {
    if (depth > MAX_DEPTH) unsupported(param, path, `nesting deeper than ${MAX_DEPTH}`);
    if (s === true || s === undefined) return { k: "any" };
    if (typeof s !== "object" || s === null || Array.isArray(s)) unsupported(param, path, "a non-object schema");
    const o = s as Record<string, unknown>;
    const known = new Set(["type", "properties", "required", "items", "enum", "const", "anyOf", "oneOf", "minItems", "maxItems", "minLength", "maxLength", "$defs", "definitions"]);
    for (const key of Object.keys(o)) if (!known.has(key) && !IGNORED.has(key)) unsupported(param, path, `'${key}'`);
    let g = compileTyped(o, path, depth);
    if (o.nullable === true) g = { k: "union", options: [g, { k: "literal", text: "null" }] };
    return g;
  };
  const compileTyped = (o: Record<string, unknown>, path: string, depth: number): Grammar => {
    if ("const" in o) return { k: "literal", text: JSON.stringify(o.const) };
    if (Array.isArray(o.enum)) {
      if (o.enum.length === 0) unsupported(param, path, "an empty enum");
      return { k: "union", options: o.enum.map((v) => ({ k: "literal", text: JSON.stringify(v) })) };
    }
    const alts = (o.anyOf ?? o.oneOf) as unknown;
    if (Array.isArray(alts)) return { k: "union", options: alts.map((a, i) => compile(a, `${path}/anyOf/${i}`, depth + 1)) };
    const type = o.type;
    if (Array.isArray(type)) return { k: "union", options: type.map((t) => compileTyped({ ...o, type: t }, path, depth)) };
    switch (type) {
      case undefined:
        return "properties" in o ? compileObject(o, path, depth) : { k: "any" };
      case "object":
        return compileObject(o, path, depth);
      case "array": {
        const min = typeof o.minItems === "number" ? o.minItems : 0;
        const max = typeof o.maxItems === "number" ? o.maxItems : Infinity;
        return { k: "array", items: compile(o.items, `${path}/items`, depth + 1), min, max };
      }
      case "string":
        return { k: "string", min: typeof o.minLength === "number" ? o.minLength : 0, max: typeof o.maxLength === "number" ? o.maxLength : Infinity };
      case "number":
        return { k: "number", integer: false };
      case "integer":
        return { k: "number", integer: true };
      case "boolean":
        return { k: "union", options: [{ k: "literal", text: "true" }, { k: "literal", text: "false" }] };
      case "null":
        return { k: "literal", text: "null" };
      default:
        return unsupported(param, path, `type ${JSON.stringify(type)}`);
    }
  };
  const compileObject = (o: Record<string, unknown>, path: string, depth: number): Grammar => {
    const props = o.properties;
    if (props === undefined) return { k: "open-object" };
    if (typeof props !== "object" || props === null) unsupported(param, path, "'properties' that is not an object");
    const required = new Set(Array.isArray(o.required) ? o.required.map(String) : []);
    return {
      k: "object",
      props: Object.entries(props as Record<string, unknown>).map(([key, sub]) => ({
        key,
        g: compile(sub, `${path}/properties/${key}`, depth + 1),
        required: required.has(key),
      })),
    };
  };
  return compile(schema, "", 0);
}

// --- the matcher -------------------------------------------------------------------------------

type Frame =
  | { t: "value"; g: Grammar }
  | { t: "lit"; text: string; pos: number }
  /** A tokenizer's own piece for `text` (the tool-call markers), read whole at a piece's start: never spelt in smaller pieces. */
  | { t: "mark"; text: string }
  | { t: "str"; n: number; min: number; max: number }
  | { t: "num"; integer: boolean; phase: "sign" | "zero" | "int" | "dot" | "frac" }
  | { t: "obj"; g: Extract<Grammar, { k: "object" }>; next: number; first: boolean }
  | { t: "open"; first: boolean }
  | { t: "arr"; g: Extract<Grammar, { k: "array" }>; count: number };

interface Stack {
  f: Frame;
  up: Stack | null;
}
/** A stack machine state; null is "a complete value, nothing left". */
type State = Stack | null;

const push = (up: State, f: Frame): Stack => ({ f, up });
const isDigit = (c: string) => c >= "0" && c <= "9";

function minLen(g: Grammar): number {
  switch (g.k) {
    case "object": {
      const req = g.props.filter((p) => p.required);
      return 2 + req.reduce((n, p) => n + JSON.stringify(p.key).length + 1 + minLen(p.g), 0) + Math.max(0, req.length - 1);
    }
    case "open-object":
      return 2;
    case "array":
      return 2 + g.min * minLen(g.items) + Math.max(0, g.min - 1);
    case "string":
      return 2 + g.min;
    case "number":
    case "any":
      return 1;
    case "literal":
      return g.text.length;
    case "union":
      return Math.min(...g.options.map(minLen));
  }
}

/** The fewest tokens that spell `text` from `pos` on (`litCosts`). */
type LitCost = (text: string, pos: number) => number;

/**
 * An upper bound of the tokens that complete a frame, each one reachable: characters (a one-character
 * piece each), except a literal, which is spelt in as few of the tokenizer's pieces as it can be.
 */
function frameCost(f: Frame, lit: LitCost): number {
  switch (f.t) {
    case "value":
      return minLen(f.g);
    case "lit":
      return lit(f.text, f.pos);
    case "mark":
      return 1;
    case "str":
      return 1 + Math.max(0, f.min - f.n);
    case "num":
      return f.phase === "sign" || f.phase === "dot" ? 1 : 0;
    case "obj": {
      const req = f.g.props.slice(f.next).filter((p) => p.required);
      return 1 + req.reduce((n, p, i) => n + (i > 0 || !f.first ? 1 : 0) + JSON.stringify(p.key).length + 1 + minLen(p.g), 0);
    }
    case "open":
      return 1;
    case "arr": {
      const left = Math.max(0, f.g.min - f.count);
      return 1 + left * (minLen(f.g.items) + 1) - (left > 0 && f.count === 0 ? 1 : 0);
    }
  }
}

function cost(s: State, lit: LitCost): number {
  let n = 0;
  for (let x = s; x; x = x.up) n += frameCost(x.f, lit);
  return n;
}

/** A state that may end here: nothing left, or only a number that is complete. */
function canEnd(s: State): boolean {
  for (let x = s; x; x = x.up) {
    if (x.f.t !== "num" || x.f.phase === "sign" || x.f.phase === "dot") return false;
  }
  return true;
}

interface MatchOptions {
  /** Characters a string may not hold (besides `"`, `\` and controls). */
  banned: string;
}

/** The states after reading `c` from a value of grammar `g` whose frame has been popped off `up`. */
function startValue(g: Grammar, up: State, c: string, o: MatchOptions, out: State[]): void {
  switch (g.k) {
    case "object":
      if (c === "{") out.push(push(up, { t: "obj", g, next: 0, first: true }));
      return;
    case "open-object":
      if (c === "{") out.push(push(up, { t: "open", first: true }));
      return;
    case "array":
      if (c === "[") out.push(push(up, { t: "arr", g, count: 0 }));
      return;
    case "string":
      if (c === '"') out.push(push(up, { t: "str", n: 0, min: g.min, max: g.max }));
      return;
    case "number":
      if (c === "-") out.push(push(up, { t: "num", integer: g.integer, phase: "sign" }));
      else if (c === "0") out.push(push(up, { t: "num", integer: g.integer, phase: "zero" }));
      else if (isDigit(c)) out.push(push(up, { t: "num", integer: g.integer, phase: "int" }));
      return;
    case "literal":
      if (g.text.startsWith(c)) out.push(g.text.length === c.length ? up : push(up, { t: "lit", text: g.text, pos: c.length }));
      return;
    case "any":
      for (const alt of ANY) startValue(alt, up, c, o, out);
      return;
    case "union":
      for (const alt of g.options) startValue(alt, up, c, o, out);
      return;
  }
}

const ANY: Grammar[] = [
  { k: "open-object" },
  { k: "array", items: { k: "any" }, min: 0, max: Infinity },
  { k: "string", min: 0, max: Infinity },
  { k: "number", integer: false },
  { k: "literal", text: "true" },
  { k: "literal", text: "false" },
  { k: "literal", text: "null" },
];

/** The states after reading `c` in state `s` (none: `c` is not allowed). */
function step(s: State, c: string, o: MatchOptions, out: State[]): void {
  if (s === null) return;
  const { f, up } = s;
  switch (f.t) {
    case "value":
      startValue(f.g, up, c, o, out);
      return;
    case "lit":
      // `c` is a code point (two UTF-16 units past U+FFFF); `pos` counts units
      if (f.text.startsWith(c, f.pos)) out.push(f.pos + c.length === f.text.length ? up : push(up, { ...f, pos: f.pos + c.length }));
      return;
    case "mark":
      // a marker is read whole, at a piece's start (`feed`), never a character at a time
      return;
    case "str":
      if (c === '"') {
        if (f.n >= f.min) out.push(up);
      } else if (c !== "\\" && c >= " " && !o.banned.includes(c) && f.n < f.max) {
        out.push(push(up, { ...f, n: f.n + 1 }));
      }
      return;
    case "num": {
      const next = (phase: typeof f.phase) => out.push(push(up, { ...f, phase }));
      if (f.phase === "sign") {
        if (c === "0") next("zero");
        else if (isDigit(c)) next("int");
        return;
      }
      if (f.phase === "dot") {
        if (isDigit(c)) next("frac");
        return;
      }
      if (isDigit(c) && f.phase !== "zero") return void next(f.phase);
      if (c === "." && !f.integer && (f.phase === "zero" || f.phase === "int")) return void next("dot");
      // The number is complete; the character belongs to what follows it.
      step(up, c, o, out);
      return;
    }
    case "obj":
      if (f.first && c === '"') stepObjectKey(f, up, false, out);
      if (!f.first && c === ",") stepObjectKey(f, up, true, out);
      if (c === "}" && !f.g.props.slice(f.next).some((p) => p.required)) out.push(up);
      return;
    case "open": {
      if (c === "}") out.push(up);
      if (!(f.first ? c === '"' : c === ",")) return;
      // a key string, a colon, any value, then back to the object
      const colon = push(push(push(up, { t: "open", first: false }), { t: "value", g: { k: "any" } }), { t: "lit", text: ":", pos: 0 });
      const key = push(colon, { t: "str", n: 0, min: 0, max: Infinity });
      out.push(f.first ? key : push(key, { t: "lit", text: '"', pos: 0 }));
      return;
    }
    case "arr": {
      const { g } = f;
      if (f.count === 0) {
        if (c === "]" && g.min === 0) out.push(up);
        if (g.max > 0) startValue(g.items, push(up, { ...f, count: 1 }), c, o, out);
        return;
      }
      if (c === "]" && f.count >= g.min) out.push(up);
      if (c === "," && f.count < g.max) out.push(push(push(up, { ...f, count: f.count + 1 }), { t: "value", g: g.items }));
      return;
    }
  }
}

/** The next key of a declared-properties object (after its opening quote, or before it after a comma): one state per key that may come next. */
function stepObjectKey(f: Extract<Frame, { t: "obj" }>, up: State, beforeQuote: boolean, out: State[]): void {
  const props = f.g.props;
  for (let j = f.next; j < props.length; j++) {
    const p = props[j]!;
    const key = JSON.stringify(p.key);
    const value = push(push(up, { t: "obj", g: f.g, next: j + 1, first: false }), { t: "value", g: p.g });
    out.push(push(value, { t: "lit", text: `${beforeQuote ? key : key.slice(1)}:`, pos: 0 }));
    if (p.required) break;
  }
}

/** The states after one character, at most 64 of them, or null when no state takes it. */
function stepAll(states: readonly State[], c: string, o: MatchOptions): State[] | null {
  const next: State[] = [];
  for (const s of states) step(s, c, o, next);
  return next.length === 0 ? null : next.length > 64 ? next.slice(0, 64) : next;
}

/** The states after reading `text` a character at a time. */
function feedChars(states: readonly State[], text: string, o: MatchOptions): State[] {
  let cur = states;
  for (const c of text) {
    const next = stepAll(cur, c, o);
    if (next === null) return [];
    cur = next;
  }
  return cur as State[];
}

/** The states after reading piece `text`: a state waiting for a marker takes it only as the piece's start. */
function feed(states: readonly State[], text: string, o: MatchOptions): State[] {
  const plain = states.filter((s) => s === null || s.f.t !== "mark");
  const out = plain.length === 0 ? [] : feedChars(plain, text, o);
  for (const s of states) {
    if (s !== null && s.f.t === "mark" && text.startsWith(s.f.text)) out.push(...feedChars([s.up], text.slice(s.f.text.length), o));
  }
  return out.length > 64 ? out.slice(0, 64) : out;
}

const pieceCache = new WeakMap<Tokenizer, string[]>();

function piecesOf(tokenizer: Tokenizer): string[] {
  let pieces = pieceCache.get(tokenizer);
  if (!pieces) {
    pieces = Array.from({ length: tokenizer.vocabSize }, (_, id) => tokenizer.decode([id]));
    pieceCache.set(tokenizer, pieces);
  }
  return pieces;
}

const CONTROL_PIECE = /^<\|[^|]*\|>$/;

/** Whether the mask ever lets piece `p` (token `id`) through: it is none of empty, a stop, a control token or a lone byte. */
const maskable = (p: string, id: number, stops: ReadonlySet<number>): boolean => p.length > 0 && !stops.has(id) && !CONTROL_PIECE.test(p) && !p.includes("\uFFFD");

/** The longest piece `litCosts` tries at a position (a literal is a tool's name or a key: short). */
const MAX_LIT_PIECE = 64;

/** The pieces a literal may be spelt with (the mask's, up to MAX_LIT_PIECE characters), per tokenizer. */
const litPieceCache = new WeakMap<Tokenizer, { usable: ReadonlySet<string>; longest: number }>();

function litPieces(tokenizer: Tokenizer, pieces: readonly string[], stops: ReadonlySet<number>): { usable: ReadonlySet<string>; longest: number } {
  let cached = litPieceCache.get(tokenizer);
  if (!cached) {
    const usable = new Set<string>();
    let longest = 1;
    for (let id = 0; id < pieces.length; id++) {
      const p = pieces[id]!;
      if (!maskable(p, id, stops) || p.length > MAX_LIT_PIECE) continue;
      usable.add(p);
      longest = Math.max(longest, p.length);
    }
    cached = { usable, longest };
    litPieceCache.set(tokenizer, cached);
  }
  return cached;
}

/**
 * The fewest of the mask's pieces that spell each suffix of a literal (the opening of a tool call, a key),
 * remembered per literal for one mask (a request's literals; a server's would only grow). Counted in
 * characters, a forced call of `add(a: integer)` needed 58 tokens (a max_tokens that held the call was
 * refused); its fewest pieces are 37 on the embedded tokenizer, 18 on qwen3.
 */
function litCosts(tokenizer: Tokenizer, pieces: readonly string[], stops: ReadonlySet<number>): LitCost {
  const { usable, longest } = litPieces(tokenizer, pieces, stops);
  const memo = new Map<string, Int32Array>();
  return (text, pos) => {
    let best = memo.get(text);
    if (!best) {
      best = new Int32Array(text.length + 1);
      for (let i = text.length - 1; i >= 0; i--) {
        const w = text.codePointAt(i)! > 0xffff ? 2 : 1;
        const c = text.slice(i, i + w);
        // a character no piece spells alone takes a token per byte (the tokenizer's byte tokens)
        let b = (best[i + w] ?? 0) + (usable.has(c) ? 1 : utf8Length(c));
        for (let len = w + 1; len <= Math.min(longest, text.length - i); len++) if (usable.has(text.slice(i, i + len))) b = Math.min(b, 1 + best[i + len]!);
        best[i] = b;
      }
      memo.set(text, best);
    }
    return best[pos]!;
  };
}

/** The tokenizer's pieces that hold part of a character (they decode alone to U+FFFD), with their bytes; none without `tokenBytes`. */
const bytePieceCache = new WeakMap<Tokenizer, ReadonlyArray<{ id: number; bytes: number[] }>>();

function bytePiecesOf(tokenizer: Tokenizer, pieces: readonly string[], stops: ReadonlySet<number>): ReadonlyArray<{ id: number; bytes: number[] }> {
  let cached = bytePieceCache.get(tokenizer);
  if (!cached) {
    const out: Array<{ id: number; bytes: number[] }> = [];
    if (tokenizer.tokenBytes) {
      for (let id = 0; id < pieces.length; id++) {
        if (pieces[id]!.includes("\uFFFD") && !stops.has(id)) out.push({ id, bytes: tokenizer.tokenBytes(id) });
      }
    }
    cached = out;
    bytePieceCache.set(tokenizer, cached);
  }
  return cached;
}

/** The mask's pieces sorted, per tokenizer (`sorted-pieces.ts`). */
const sortedCache = new WeakMap<Tokenizer, SortedPieces>();

/**
 * How a mask tries the pieces at a step: "sorted", walked in sorted order sharing common prefixes (what
 * the server uses); "each", every piece fed on its own (what the sorted walk must agree with: tests compare them).
 */
export type MaskScan = "sorted" | "each";

/** Where the pieces that begin with `prefix` start in sorted order (they follow one another). */
function firstWithPrefix(pieces: readonly string[], sorted: SortedPieces, prefix: string): number {
  let lo = 0;
  for (let hi = sorted.ids.length; lo < hi; ) {
    const mid = (lo + hi) >> 1;
    if (pieces[sorted.ids[mid]!]! < prefix) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function sortedOf(tokenizer: Tokenizer, pieces: readonly string[], stops: ReadonlySet<number>): SortedPieces {
  let sorted = sortedCache.get(tokenizer);
  if (!sorted) sortedCache.set(tokenizer, (sorted = sortPieces(pieces, (p, id) => maskable(p, id, stops))));
  return sorted;
}

/**
 * The mask's pieces split for a string: `plain`, those a string takes whole whatever it holds (no `"`,
 * `\`, control or banned character), shortest first (in characters), with `upTo[k]` of them at most k
 * characters long; and the rest, sorted. Inside a string almost every piece is plain, so a step allows
 * those that fit at once and walks only the rest: the walk of all of Qwen3's pieces took 24-124 ms a
 * token there. Per tokenizer and banned characters.
 */
interface StringPieces {
  plain: Int32Array;
  upTo: Int32Array;
  rest: SortedPieces;
}

const stringPieceCache = new WeakMap<Tokenizer, Map<string, StringPieces>>();

/** A piece's length in characters (code points) when a string takes it whole, else -1. */
const plainLength = (p: string, banned: string): number => {
  let n = 0;
  for (const c of p) {
    if (c === '"' || c === "\\" || c < " " || banned.includes(c)) return -1;
    n++;
  }
  return n;
};

function stringPiecesOf(tokenizer: Tokenizer, pieces: readonly string[], stops: ReadonlySet<number>, banned: string): StringPieces {
  let byBanned = stringPieceCache.get(tokenizer);
  if (!byBanned) stringPieceCache.set(tokenizer, (byBanned = new Map()));
  let cached = byBanned.get(banned);
  if (!cached) {
    // each piece's plain length (0: not a piece the mask uses, -1: not plain), then the plain ones by length (a counting sort)
    const lengths = new Int32Array(pieces.length);
    let longest = 0;
    for (let id = 0; id < pieces.length; id++) {
      lengths[id] = maskable(pieces[id]!, id, stops) ? plainLength(pieces[id]!, banned) : 0;
      longest = Math.max(longest, lengths[id]!);
    }
    const upTo = new Int32Array(longest + 1);
    for (let id = 0; id < pieces.length; id++) if (lengths[id]! > 0) upTo[lengths[id]!]!++;
    for (let k = 1; k <= longest; k++) upTo[k]! += upTo[k - 1]!;
    const plain = new Int32Array(upTo[longest]!);
    const next = upTo.slice();
    for (let id = pieces.length - 1; id >= 0; id--) if (lengths[id]! > 0) plain[--next[lengths[id]!]!] = id;
    const rest = sortPieces(pieces, (_p, id) => lengths[id] === -1);
    byBanned.set(banned, (cached = { plain, upTo, rest }));
  }
  return cached;
}

/** What the tool-call mask bans in strings ("<" would let a string argument close the block early); the JSON mask bans nothing. */
const TOOL_CALL_BANNED = "<";

/**
 * Builds a tokenizer's mask tables (its pieces decoded, sorted, those of bytes, those a literal may be
 * spelt with, those a string takes whole) at start-up, for a policy whose engine masks: the first
 * structured request built them on the event loop (about 0.8 s for Qwen3's 151,669 pieces, 0.3 s of it
 * the pieces a string takes whole).
 */
export function warmMaskTables(tokenizer: Tokenizer): void {
  const pieces = piecesOf(tokenizer);
  const stops = new Set(tokenizer.stopIds);
  sortedOf(tokenizer, pieces, stops);
  bytePiecesOf(tokenizer, pieces, stops);
  litPieces(tokenizer, pieces, stops);
  for (const banned of ["", TOOL_CALL_BANNED]) stringPiecesOf(tokenizer, pieces, stops, banned);
}

/**
 * When the one state is inside a string: the lengths (in characters, at most `longest`) of the plain
 * pieces it may take, [lo, hi] (empty when lo > hi): up to the string's maximum, and long enough to leave
 * room to finish (a longer piece only brings a minimum length closer, so the room grows with the length).
 * Null when the state is not one string.
 */
function plainLengths(states: readonly State[], remaining: number, lit: LitCost, longest: number): [number, number] | null {
  if (states.length !== 1) return null;
  const s = states[0]!;
  if (s === null || s.f.t !== "str") return null;
  const f = s.f;
  const hi = Math.min(f.max - f.n, longest);
  const fits = (k: number) => cost(push(s.up, { ...f, n: f.n + k }), lit) + 1 <= remaining - 1;
  if (hi < 1 || !fits(hi)) return [1, 0];
  let lo = 1;
  for (let top = hi; lo < top; ) {
    const mid = (lo + top) >> 1;
    if (fits(mid)) top = mid;
    else lo = mid + 1;
  }
  return [lo, hi];
}

function createMask(tokenizer: Tokenizer, initial: State[], o: MatchOptions, scan: MaskScan): TokenMask & { minTokens: number } {
  const pieces = piecesOf(tokenizer);
  const stops = new Set(tokenizer.stopIds);
  const walk = sortedOf(tokenizer, pieces, stops);
  const lit = litCosts(tokenizer, pieces, stops);
  const minCost = (s: readonly State[]) => Math.min(...s.map((a) => cost(a, lit)));
  // With the tokenizer's bytes, a character no piece spells whole is spelt with pieces that hold part of
  // one (the embedded tokenizer's byte tokens, Qwen3's split characters): `pending` holds the bytes of a
  // character begun and not yet complete; output stays valid UTF-8. Without them, such pieces are masked out.
  const bytePieces = bytePiecesOf(tokenizer, pieces, stops);
  let states = initial;
  let pending: number[] = [];
  /** The states, and the bytes of a character left begun, after a piece's bytes; null when they are not allowed. */
  const readBytes = (bytes: readonly number[]): { states: State[]; rest: number[] } | null => {
    const split = splitUtf8([...pending, ...bytes]);
    if (split === null) return null;
    const after = split.text.length === 0 ? [...states] : feed(states, split.text, o);
    return after.length === 0 ? null : { states: after, rest: split.rest };
  };
  /**
   * The fewest tokens that complete `s` with the bytes `rest` of a character begun: that character finished
   * (a token per byte left), then the rest. Infinite when no character the states take begins so.
   */
  const costWith = (s: readonly State[], rest: readonly number[]): number => {
    if (rest.length === 0) return minCost(s);
    const candidates = new Set<string>();
    // a string takes any character: one that begins with `rest` stands for all
    const any = completionOf(rest);
    if (any !== null) candidates.add(any);
    for (const st of s) {
      if (st?.f.t !== "lit") continue;
      const next = String.fromCodePoint(st.f.text.codePointAt(st.f.pos)!);
      if (startsWithBytes(next, rest)) candidates.add(next);
    }
    let best = Infinity;
    for (const c of candidates) {
      const after = feedChars(s, c, o);
      if (after.length > 0) best = Math.min(best, utf8Length(c) - rest.length + minCost(after));
    }
    return best;
  };
  return {
    minTokens: minCost(initial) + 1,
    allowed(out, remaining) {
      const done = pending.length === 0 && states.some(canEnd);
      for (const id of stops) if (done) out[id] = 1;
      if (remaining <= 1) return;
      // after a token, `remaining - 1` tokens are left: enough for the shortest completion and the stop
      const visit = (id: number, after: State[]) => {
        if (minCost(after) + 1 <= remaining - 1) out[id] = 1;
      };
      const inString = scan === "sorted" && pending.length === 0 ? stringPiecesOf(tokenizer, pieces, stops, o.banned) : null;
      const lengths = inString && plainLengths(states, remaining, lit, inString.upTo.length - 1);
      if (pending.length > 0) {
        // only pieces of bytes can go on with a character begun (below)
      } else if (inString && lengths) {
        const { plain, upTo, rest } = inString;
        const [lo, hi] = lengths;
        for (let k = upTo[lo - 1]!, end = lo <= hi ? upTo[hi]! : 0; k < end; k++) out[plain[k]!] = 1;
        walkPieces(pieces, rest, states, (s, c) => stepAll(s, c, o), visit);
      } else if (scan === "sorted") {
        // a marker (first in a tool call, and after its arguments) is read whole at a piece's start (`feed`):
        // only the pieces that begin with it, which follow one another in sorted order
        const unmarked = states.filter((s) => s?.f.t !== "mark");
        if (unmarked.length > 0) walkPieces(pieces, walk, unmarked, (s, c) => stepAll(s, c, o), visit);
        for (const s of states) {
          if (s?.f.t !== "mark") continue;
          const mark = s.f.text;
          for (let k = firstWithPrefix(pieces, walk, mark); k < walk.ids.length && pieces[walk.ids[k]!]!.startsWith(mark); k++) {
            const id = walk.ids[k]!;
            const after = feedChars([s.up], pieces[id]!.slice(mark.length), o);
            if (after.length > 0) visit(id, after);
          }
        }
      } else {
        // every piece on its own (what the sorted scans must agree with)
        for (let id = 0; id < pieces.length; id++) {
          const p = pieces[id]!;
          if (!maskable(p, id, stops)) continue;
          const after = feed(states, p, o);
          if (after.length > 0) visit(id, after);
        }
      }
      for (const { id, bytes } of bytePieces) {
        const r = readBytes(bytes);
        if (r !== null && costWith(r.states, r.rest) + 1 <= remaining - 1) out[id] = 1;
      }
    },
    accept(id) {
      if (stops.has(id)) return;
      const p = pieces[id] ?? "";
      if (pending.length === 0 && !p.includes("\uFFFD")) {
        states = feed(states, p, o);
        return;
      }
      const r = readBytes(tokenizer.tokenBytes?.(id) ?? []);
      states = r?.states ?? [];
      pending = r?.rest ?? [];
    },
  };
}

/** A mask that lets only JSON of `grammar` through, then an end of turn. */
export function createJsonMask(tokenizer: Tokenizer, grammar: Grammar, scan: MaskScan = "sorted"): TokenMask & { minTokens: number } {
  return createMask(tokenizer, [push(null, { t: "value", g: grammar })], { banned: "" }, scan);
}

/**
 * A mask that makes the generation exactly one tool call in the tokenizers' syntax,
 * `<tool_call>{"name": <one of the tools>, "arguments": <its parameters>}</tool_call>`, then an end of turn.
 */
export function createToolCallMask(
  tokenizer: Tokenizer,
  tools: ReadonlyArray<{ name: string; grammar: Grammar }>,
  scan: MaskScan = "sorted",
): TokenMask & { minTokens: number } {
  // The markers are the tokenizer's own pieces where it has them (Qwen3's and the embedded one's), as the
  // chat template renders them: a call spelt `<`, `tool`, `_call`, `>` would train a policy to spell it so.
  const { usable } = litPieces(tokenizer, piecesOf(tokenizer), new Set(tokenizer.stopIds));
  const marker = (text: string): Frame => (usable.has(text) ? { t: "mark", text } : { t: "lit", text, pos: 0 });
  const initial = tools.map((t) => {
    const close = push(push(null, marker("</tool_call>")), { t: "lit", text: "}", pos: 0 });
    const args = push(close, { t: "value", g: t.grammar });
    return push(push(args, { t: "lit", text: `{"name":${JSON.stringify(t.name)},"arguments":`, pos: 0 }), marker("<tool_call>"));
  });
  return createMask(tokenizer, initial, { banned: TOOL_CALL_BANNED }, scan);
}
