import { createEmbeddedTokenizer } from "./embedded.ts";
import { UnknownTokenizerError } from "./errors.ts";
import { createQwen3Tokenizer } from "./qwen3.ts";
import type { Tokenizer } from "./tokenizer.ts";

export type TokenizerKind = "embedded" | "qwen3";

export function createTokenizer(kind: TokenizerKind): Tokenizer {
  if (kind === "embedded") return createEmbeddedTokenizer();
  if (kind === "qwen3") return createQwen3Tokenizer();
  throw new UnknownTokenizerError(kind);
}
