import { describe, expect, it } from "vitest";
import { PolicySchema } from "../../../server/config/run-config.ts";
import { createEngine } from "../../../server/engines/create-engine.ts";
import { createEmbeddedTokenizer } from "../../../server/tokenizers/embedded.ts";

describe("createEngine", () => {
  it("builds the embedded engine with the tokenizer's vocabulary, and it generates within it", async () => {
    const tok = createEmbeddedTokenizer();
    const policy = PolicySchema.parse({ engine: { kind: "embedded", model: { layers: 1, dim: 16, heads: 2, context: 64 } } });
    const engine = await createEngine(policy, tok);
    expect(engine.kind).toBe("embedded");
    expect(engine.maxContext).toBe(64);
    const out = await engine.generate(tok.encode("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"), {
      maxTokens: 5,
      temperature: 1,
      topP: 1,
      seed: 1,
      stopIds: tok.stopIds,
    });
    expect(out.outputIds.length).toBeGreaterThan(0);
    expect(out.outputIds.every((id) => id >= 0 && id < tok.vocabSize)).toBe(true);
    expect(out.logprobs).toHaveLength(out.outputIds.length);
    await engine.close();
  });
});
