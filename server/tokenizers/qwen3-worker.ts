import { loadQwen3Text, type Piece } from "./qwen3-text.ts";

/**
 * The encode worker (a piscina thread): tokenizes a prompt's new segments off the event loop, so a huge
 * message never holds the server. The tokenizer loads once per thread, on its first task.
 */
let text: ReturnType<typeof loadQwen3Text> | undefined;

export interface EncodeTask {
  /** Each segment's pieces (text runs and control ids). */
  segments: Piece[][];
}

export interface EncodeResult {
  /** Every segment's ids, one after another. */
  ids: Int32Array;
  /** Where each segment's ids end in `ids`. */
  ends: number[];
}

export default function encode(task: EncodeTask): EncodeResult {
  text ??= loadQwen3Text();
  const all: number[] = [];
  const ends: number[] = [];
  for (const pieces of task.segments) {
    for (const id of text.encodePieces(pieces)) all.push(id);
    ends.push(all.length);
  }
  return { ids: Int32Array.from(all), ends };
}
