import { describe, expect, it } from "vitest";
import { createTokenizer } from "../../../server/tokenizers/create-tokenizer.ts";
import type { Tokenizer } from "../../../server/tokenizers/tokenizer.ts";
import { createToolCallMask, toJsonGrammar } from "../../../server/openai/json-mask.ts";

/** The ids `mask` allows now, with `remaining` tokens left. */
function allowedIds(mask: { allowed(out: Uint8Array, remaining: number): void }, vocab: number, remaining = 100): Set<number> {
  const out = new Uint8Array(vocab);
  mask.allowed(out, remaining);
  return new Set([...out.keys()].filter((id) => out[id] === 1));
}

const tools = [{ name: "add", grammar: toJsonGrammar({ type: "object", properties: { a: { type: "integer" } }, required: ["a"] }, "tools") }];

describe.each(["embedded", "qwen3"] as const)("a forced tool call on the %s tokenizer", (name) => {
  const tok: Tokenizer = createTokenizer(name);
  const [open] = tok.encode("<tool_call>");
  const [close] = tok.encode("</tool_call>");
  const idOf = (piece: string) => {
    const ids = tok.encode(piece);
    expect(ids).toHaveLength(1);
    return ids[0]!;
  };

  it("has its markers as tokens of their own (what the chat template renders)", () => {
    expect(tok.encode("<tool_call>")).toEqual([open]);
    expect(tok.decode([open!])).toBe("<tool_call>");
    expect(tok.decode([close!])).toBe("</tool_call>");
  });

  it("lets `<tool_call>` and `</tool_call>` through only as those tokens, never spelt in smaller pieces", () => {
    const mask = createToolCallMask(tok, tools);
    expect([...allowedIds(mask, tok.vocabSize)]).toEqual([open]);
    mask.accept(open!);
    for (const c of '{"name":"add","arguments":{"a":7}') mask.accept(idOf(c));
    // the arguments are closed: only the call's "}", then only the closing marker
    expect([...allowedIds(mask, tok.vocabSize)]).toEqual([idOf("}")]);
    mask.accept(idOf("}"));
    expect([...allowedIds(mask, tok.vocabSize)]).toEqual([close]);
    mask.accept(close!);
    expect([...allowedIds(mask, tok.vocabSize)].every((id) => tok.stopIds.includes(id))).toBe(true);
  });
});
