import type { RenderedPrompt } from "./tokenizer.ts";

/** A prompt's ids in one array: its segments' then its header's (one concat, which copies plain arrays whole). */
export function promptIds(prompt: Pick<RenderedPrompt, "segments" | "headerIds">): number[] {
  return ([] as number[]).concat(...prompt.segments.map((s) => (s.ids instanceof Int32Array ? Array.from(s.ids) : s.ids)), prompt.headerIds);
}
