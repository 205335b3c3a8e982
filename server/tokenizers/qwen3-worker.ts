import { loadQwen3Text } from "./qwen3-text.ts";
import { type PackedSegments, packIds, unpackSegments } from "./shared-text.ts";

/**
 * The encode worker (a piscina thread): tokenizes a prompt's new segments off the event loop, so a huge
 * message never holds the server. The tokenizer loads once per thread, on its first task (the server
 * sends an empty one when it starts).
 */
let text: ReturnType<typeof loadQwen3Text> | undefined;

export type EncodeTask = PackedSegments;

/** Every segment's ids, as `packIds` lays them out. */
export type EncodeResult = Int32Array;

export default function encode(task: EncodeTask): EncodeResult {
  text ??= loadQwen3Text();
  const all: number[] = [];
  const ends: number[] = [];
  for (const pieces of unpackSegments(task)) {
    for (const id of text.encodePieces(pieces)) all.push(id);
    ends.push(all.length);
  }
  return packIds(all, ends);
}
