import type { RenderedPrompt } from "./tokenizer.ts";

/** A prompt's length in tokens: its segments' ids and its header ids. */
export function promptLength(prompt: { segments: ReadonlyArray<{ ids: ArrayLike<number> }>; headerIds: ArrayLike<number> }): number {
  let n = prompt.headerIds.length;
  for (const s of prompt.segments) n += s.ids.length;
  return n;
}

/** A prompt's ids in one array: its segments' then its header's (one concat, which copies plain arrays whole). */
export function promptIds(prompt: Pick<RenderedPrompt, "segments" | "headerIds">): number[] {
  return ([] as number[]).concat(...prompt.segments.map((s) => (s.ids instanceof Int32Array ? Array.from(s.ids) : s.ids)), prompt.headerIds);
}
