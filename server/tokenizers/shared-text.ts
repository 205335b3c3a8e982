import type { Piece } from "./qwen3-text.ts";

/**
 * How a prompt's new segments cross to the encode thread: their text as UTF-8 in one SharedArrayBuffer,
 * written by the event loop a slice at a time, so a huge message is never copied (structured clone) in
 * one go. The ids come back in shared memory too.
 */
export interface PackedSegments {
  /** Every run's UTF-8, one after another. */
  text: SharedArrayBuffer;
  /** Each segment as control-token ids and runs of text (`[start, end)` bytes of `text`). */
  segments: Array<Array<number | [number, number]>>;
}

/** Characters written per slice (about a tenth of a millisecond). */
const SLICE_CHARS = 1 << 17;

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/** Packs segments' pieces; `maybeYield` lets the event loop run between slices. */
export async function packSegments(segments: readonly (readonly Piece[])[], maybeYield: () => Promise<void>): Promise<PackedSegments> {
  let chars = 0;
  for (const seg of segments) for (const p of seg) if (typeof p === "string") chars += p.length;
  // UTF-8 takes at most 3 bytes per UTF-16 unit; the pages past what is written are never touched.
  const text = new SharedArrayBuffer(Math.max(1, chars * 3));
  const bytes = new Uint8Array(text);
  const encoder = new TextEncoder();
  let at = 0;
  const out: PackedSegments["segments"] = [];
  for (const seg of segments) {
    const items: PackedSegments["segments"][number] = [];
    let runStart = -1;
    for (const p of seg) {
      if (typeof p === "number") {
        if (runStart >= 0) items.push([runStart, at]);
        runStart = -1;
        items.push(p);
        continue;
      }
      if (runStart < 0) runStart = at;
      for (let i = 0; i < p.length; ) {
        let end = Math.min(i + SLICE_CHARS, p.length);
        // a surrogate pair is never cut in two (each half alone would encode as U+FFFD)
        if (end < p.length && isHighSurrogate(p.charCodeAt(end - 1))) end--;
        at += encoder.encodeInto(end - i === p.length ? p : p.slice(i, end), bytes.subarray(at)).written;
        i = end;
        if (end < p.length) await maybeYield();
      }
    }
    if (runStart >= 0) items.push([runStart, at]);
    out.push(items);
  }
  return { text, segments: out };
}

/** The pieces back, on the encode thread: each run one string. */
export function unpackSegments(packed: PackedSegments): Piece[][] {
  const decoder = new TextDecoder();
  const bytes = new Uint8Array(packed.text);
  return packed.segments.map((seg) => seg.map((p) => (typeof p === "number" ? p : decoder.decode(bytes.slice(p[0], p[1])))));
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
