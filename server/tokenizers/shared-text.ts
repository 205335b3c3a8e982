import type { Piece } from "./qwen3-text.ts";

/**
 * How a prompt's new segments cross to the encode thread: their text as UTF-8 in SharedArrayBuffers,
 * written by the event loop a slice at a time, so a huge message is never copied (structured clone) in
 * one go, and never into one huge buffer either (allocating, zeroing, 12 MB for a 4 MB message held the
 * loop for milliseconds): the text fills chunks of about a slice's UTF-8, each allocated when the last is
 * full and as large as the slice needs (a chunk's pages are all zeroed, so written for the first time, at
 * 3 ms per MB on these machines: a chunk of three bytes per character, ASCII's worst case thrice over,
 * cost a 4 MB message 10 ms more). The ids come back in shared memory too.
 */
export interface PackedSegments {
  /** The text's UTF-8, chunk after chunk. */
  chunks: SharedArrayBuffer[];
  /** Each segment as control-token ids and runs of text (each run its byte ranges: chunk, start, end, ...). */
  segments: Array<Array<number | number[]>>;
}

/** Characters written per slice (about a tenth of a millisecond). */
const SLICE_CHARS = 1 << 17;
/** Bytes per chunk at least (short pieces share it), unless the text is shorter. */
const CHUNK_BYTES = SLICE_CHARS;

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/** Packs segments' pieces; `maybeYield` (which lets the event loop run once it is due) is called between slices and after each segment. */
export async function packSegments(segments: readonly (readonly Piece[])[], maybeYield: () => Promise<void>): Promise<PackedSegments> {
  let chars = 0;
  for (const seg of segments) for (const p of seg) if (typeof p === "string") chars += p.length;
  const encoder = new TextEncoder();
  const chunks: SharedArrayBuffer[] = [];
  let bytes: Uint8Array = new Uint8Array(0);
  let at = 0;
  /** Room for `text`'s UTF-8: a new chunk when the current one could not hold it. */
  const room = (text: string): void => {
    const need = Buffer.byteLength(text, "utf8");
    if (bytes.length - at >= need) return;
    // the last chunk is as small as the text left allows
    const size = Math.max(1, need, Math.min(CHUNK_BYTES, chars * 3));
    chunks.push(new SharedArrayBuffer(size));
    bytes = new Uint8Array(chunks[chunks.length - 1]!);
    at = 0;
  };
  const out: PackedSegments["segments"] = [];
  for (const seg of segments) {
    const items: PackedSegments["segments"][number] = [];
    let run: number[] | null = null;
    for (const p of seg) {
      if (typeof p === "number") {
        if (run !== null) items.push(run);
        run = null;
        items.push(p);
        continue;
      }
      run ??= [];
      for (let i = 0; i < p.length; ) {
        let end = Math.min(i + SLICE_CHARS, p.length);
        // a surrogate pair is never cut in two (each half alone would encode as U+FFFD)
        if (end < p.length && isHighSurrogate(p.charCodeAt(end - 1))) end--;
        const slice = end - i === p.length ? p : p.slice(i, end);
        room(slice);
        const start = at;
        at += encoder.encodeInto(slice, bytes.subarray(at)).written;
        run.push(chunks.length - 1, start, at);
        chars -= end - i;
        i = end;
        if (end < p.length) await maybeYield();
      }
    }
    if (run !== null) items.push(run);
    out.push(items);
    // many short segments add up too (2,000 messages held the loop 8 ms without a turn)
    await maybeYield();
  }
  return { chunks, segments: out };
}

/** The pieces back, on the encode thread: each run one string. */
export function unpackSegments(packed: PackedSegments): Piece[][] {
  const decoder = new TextDecoder();
  const views = packed.chunks.map((c) => new Uint8Array(c));
  const decode = (ranges: number[]): string => {
    let text = "";
    for (let k = 0; k < ranges.length; k += 3) text += decoder.decode(views[ranges[k]!]!.slice(ranges[k + 1], ranges[k + 2]));
    return text;
  };
  return packed.segments.map((seg) => seg.map((p) => (typeof p === "number" ? p : decode(p))));
}

/**
 * Every segment's ids, back from the encode thread in shared memory (no copy on the way back): the number
 * of segments `n`, where each segment's ids end (`n` offsets into the ids), then the ids one after another.
 */
export function packIds(all: readonly number[], ends: readonly number[]): Int32Array {
  const out = new Int32Array(new SharedArrayBuffer(4 * (1 + ends.length + all.length)));
  out[0] = ends.length;
  out.set(ends, 1);
  out.set(all, 1 + ends.length);
  return out;
}

/** Each segment's ids, as views of what `packIds` made. */
export function unpackIds(packed: Int32Array): Int32Array[] {
  const n = packed[0]!;
  let start = 1 + n;
  return Array.from({ length: n }, (_, i) => {
    const end = 1 + n + packed[1 + i]!;
    const ids = packed.subarray(start, end);
    start = end;
    return ids;
  });
}
