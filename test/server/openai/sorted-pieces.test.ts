import { describe, expect, it } from "vitest";
import { createJsonMask, createToolCallMask, toJsonGrammar } from "../../../server/openai/json-mask.ts";
import { sortPieces, walkPieces } from "../../../server/openai/sorted-pieces.ts";
import { createTokenizer } from "../../../server/tokenizers/create-tokenizer.ts";

describe("pieces walked in sorted order", () => {
  it("visits exactly the pieces a matcher reads whole, with the state each one reads to", () => {
    const pieces = ["ab", "a", "abc", "b", "🙂", "🙂a", "\uD83D\uDE42b", "abd", "", "ac", "\uD83D\uDE00", "bca"];
    // the matcher: reads "a", "b", "🙂" only, counting characters; "c" only after two characters
    const stepChar = (n: number, c: string) => (c === "a" || c === "b" || c === "🙂" || (c === "c" && n >= 2) ? n + 1 : null);
    const naive = new Map<number, number>();
    pieces.forEach((p, id) => {
      let n: number | null = 0;
      for (const c of p) if (n !== null) n = stepChar(n, c);
      if (n !== null && p.length > 0) naive.set(id, n);
    });
    const seen = new Map<number, number>();
    walkPieces(pieces, sortPieces(pieces, (p) => p.length > 0), 0, stepChar, (id, n) => seen.set(id, n));
    expect(new Map([...seen].sort((a, b) => a[0] - b[0]))).toEqual(new Map([...naive].sort((a, b) => a[0] - b[0])));
  });
});

/** Samples under the sorted mask, checking at every step that the piece-by-piece mask allows the same ids. */
function compare(tok: ReturnType<typeof createTokenizer>, make: (scan: "sorted" | "each") => ReturnType<typeof createJsonMask>, seed: number, budget: number): number {
  const sorted = make("sorted");
  const each = make("each");
  let x = seed + 7;
  const rand = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  let steps = 0;
  for (let left = budget; left > 0; left--) {
    const a = new Uint8Array(tok.vocabSize);
    const b = new Uint8Array(tok.vocabSize);
    sorted.allowed(a, left);
    each.allowed(b, left);
    const ids = [...a.keys()].filter((id) => a[id] === 1);
    expect(ids).toEqual([...b.keys()].filter((id) => b[id] === 1));
    steps++;
    const id = ids[Math.floor(rand() * ids.length)]!;
    if (tok.stopIds.includes(id)) break;
    sorted.accept(id);
    each.accept(id);
  }
  return steps;
}

describe.each([
  ["embedded", 4],
  ["qwen3", 1],
] as const)("the sorted walk on the %s tokenizer", (name, seeds) => {
  const tok = createTokenizer(name);
  const schema = toJsonGrammar(
    { type: "object", properties: { n: { type: "number" }, s: { type: "string", maxLength: 5 }, e: { enum: ["café", "𧓋", "ok"] }, o: {} }, required: ["n", "s", "e", "o"] },
    "response_format",
  );
  const add = toJsonGrammar({ type: "object", properties: { a: { type: "integer" } }, required: ["a"] }, "tools");
  // strings with no maximum length, where a step allows the plain pieces at once and walks only the rest
  const text = toJsonGrammar({ type: "object", properties: { t: { type: "string", minLength: 3 } }, required: ["t"] }, "response_format");
  const note = toJsonGrammar({ type: "object", properties: { text: { type: "string" } }, required: ["text"] }, "tools");
  const long = toJsonGrammar({ type: "string", minLength: 20 }, "response_format");

  it("allows the same ids as every piece fed on its own, step by step (a JSON schema, a forced tool call)", () => {
    let steps = 0;
    for (let seed = 0; seed < seeds; seed++) {
      steps += compare(tok, (scan) => createJsonMask(tok, schema, scan), seed, 40);
      // the embedded tokenizer spells a call a character a token: 30 tokens cannot hold one
      steps += compare(tok, (scan) => createToolCallMask(tok, [{ name: "add", grammar: add }], scan), seed, name === "qwen3" ? 30 : 60);
    }
    expect(steps).toBeGreaterThan(10 * seeds);
  });

  it("allows the same ids inside strings, where it allows the pieces a string takes whole at once", () => {
    let steps = 0;
    for (let seed = 0; seed < seeds; seed++) {
      // a budget that runs out inside the string: the string must close in time
      steps += compare(tok, (scan) => createJsonMask(tok, text, scan), seed, name === "qwen3" ? 6 : 13);
      steps += compare(tok, (scan) => createToolCallMask(tok, [{ name: "note", grammar: note }], scan), seed, name === "qwen3" ? 12 : 70);
      // so few tokens for so many characters that only long pieces leave room to finish
      steps += compare(tok, (scan) => createJsonMask(tok, long, scan), seed, name === "qwen3" ? 16 : 24);
    }
    expect(steps).toBeGreaterThan(10 * seeds);
  });
});
