/** Tokenizers: the `Tokenizer` contract, `createTokenizer`, the embedded and Qwen3 tokenizers, the encode thread. */
export { createTokenizer, type TokenizerKind } from "./create-tokenizer.ts";
export { createEmbeddedTokenizer, EMBEDDED_IDS } from "./embedded.ts";
export { closeEncodePool } from "./encode-pool.ts";
export { UnknownTokenizerError } from "./errors.ts";
export { promptIds, promptLength } from "./prompt-ids.ts";
export { createQwen3Tokenizer } from "./qwen3.ts";
export type { ChatTurnMessage, PromptSegment, RenderedPrompt, RenderOptions, Tokenizer, ToolDefinition } from "./tokenizer.ts";
