import { readFileSync } from "node:fs";
import { type TokenizerClassNameMapping, TokenizerLoader } from "@lenml/tokenizers";
import { QWEN3_FILES } from "./qwen3-files.ts";

/**
 * A rendered segment before tokenizing: text (encoded as text) and control-token ids, in order.
 * Consecutive strings are one run of text: a huge message stays its own string (never concatenated with
 * the template text around it on the event loop); the encoder joins the run.
 */
export type Piece = string | number;

/** The pieces as runs: consecutive strings joined, ids as they are. */
export function joinRuns(pieces: readonly Piece[]): Piece[] {
  const out: Piece[] = [];
  let run: string[] = [];
  for (const p of pieces) {
    if (typeof p === "string") run.push(p);
    else {
      out.push(run.join(""), p);
      run = [];
    }
  }
  out.push(run.join(""));
  return out;
}

/**
 * Qwen3's tokenizer pipeline for text as text: normalizer, pre-tokenizer and BPE, without splitting out
 * added tokens (a `<|im_end|>` in a run is characters). The server's render and its encode worker share it.
 */
export function loadQwen3Text(): {
  hf: TokenizerClassNameMapping<"Qwen2Tokenizer">;
  /** `tokenizer_config.json` (its `chat_template` among others). */
  config: Record<string, unknown>;
  encodeText(text: string): number[];
  encodePieces(pieces: readonly Piece[]): number[];
} {
  const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  const config = readJson(QWEN3_FILES.config);
  const hf = TokenizerLoader.fromPreTrained({ tokenizerJSON: readJson(QWEN3_FILES.tokenizer), tokenizerConfig: config }) as TokenizerClassNameMapping<"Qwen2Tokenizer">;
  const encodeText = (text: string): number[] => {
    if (text.length === 0) return [];
    const normalized = hf.normalizer ? hf.normalizer(text) : text;
    const pre = hf.pre_tokenizer ? hf.pre_tokenizer(normalized, { section_index: 0 }) : [normalized];
    return hf.model.convert_tokens_to_ids(hf.model(pre)) as number[];
  };
  const encodePieces = (pieces: readonly Piece[]): number[] => {
    const out: number[] = [];
    for (const p of joinRuns(pieces)) {
      if (typeof p === "number") out.push(p);
      else for (const id of encodeText(p)) out.push(id);
    }
    return out;
  };
  return { hf, config, encodeText, encodePieces };
}
