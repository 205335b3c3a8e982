import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { createJsonMask, toJsonGrammar } from "../../../server/openai/json-mask.ts";
import { createTokenizer } from "../../../server/tokenizers/create-tokenizer.ts";

/** Samples a generation under `mask`, uniformly among the ids it allows (seeded), until a stop id or `budget` tokens. */
function sample(mask: ReturnType<typeof createJsonMask>, vocab: number, stops: readonly number[], budget: number, seed: number): number[] {
  let x = seed + 1;
  const rand = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const ids: number[] = [];
  for (let left = budget; left > 0; left--) {
    const out = new Uint8Array(vocab);
    mask.allowed(out, left);
    const allowed = [...out.keys()].filter((id) => out[id] === 1);
    if (allowed.length === 0) throw new Error(`no token allowed after ${ids.length}`);
    const id = allowed[Math.floor(rand() * allowed.length)]!;
    if (stops.includes(id)) return ids;
    mask.accept(id);
    ids.push(id);
  }
  throw new Error("no stop inside the budget");
}

// Characters no piece spells whole: on the embedded tokenizer every non-ASCII one; on Qwen3, rare ones
// (𧓋 is three pieces of its bytes).
describe.each(["embedded", "qwen3"] as const)("a JSON mask on the %s tokenizer, for text spelt in pieces of characters", (name) => {
  const tok = createTokenizer(name);

  it("spells each character its bytes need, and its output is valid UTF-8 that validates", () => {
    const schema = { type: "object", properties: { k: { enum: ["𧓋", "café"] }, s: { type: "string", maxLength: 4 } }, required: ["k", "s"], additionalProperties: false };
    const validate = new Ajv().compile(schema);
    const seen = new Set<string>();
    for (let seed = 0; seed < 4; seed++) {
      const mask = createJsonMask(tok, toJsonGrammar(schema, "response_format"));
      const ids = sample(mask, tok.vocabSize, tok.stopIds, 60, seed);
      const bytes = Buffer.from(ids.flatMap((id) => tok.tokenBytes!(id)));
      const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      expect(validate(JSON.parse(text)), text).toBe(true);
      seen.add((JSON.parse(text) as { k: string }).k);
    }
    // both values come up: the one spelt in pieces of its bytes too
    expect([...seen].sort()).toEqual(["café", "𧓋"]);
  });
});

describe("qwen3 token bytes", () => {
  it("gives each token's own bytes: a split character's pieces join to its UTF-8", () => {
    const tok = createTokenizer("qwen3");
    for (const text of ["𧓋 é 🙂", "<|im_end|> plain", "naïve — 你好"]) {
      const ids = [...tok.encode(text)];
      for (const id of ids) expect(tok.tokenBytes!(id).every((b) => Number.isInteger(b) && b >= 0 && b < 256)).toBe(true);
      expect(Buffer.from(ids.flatMap((id) => tok.tokenBytes!(id))).toString("utf8")).toBe(text);
    }
  });
});
