import { createZeroLatencyEngine } from "../../doubles/zero-latency-engine.ts";
import type { Engine } from "../../../server/engines/engine.ts";
import { createEmbeddedTokenizer } from "../../../server/tokenizers/embedded.ts";

export const embeddedTokenizer = createEmbeddedTokenizer();

/** A zero-latency engine that answers the given texts in turn (embedded-tokenizer ids), then repeats the last. */
export function scriptedEngine(replies: readonly string[], opts: { maxContext?: number } = {}): Engine & { prompts: number[][] } {
  const prompts: number[][] = [];
  let i = 0;
  const engine = createZeroLatencyEngine({
    ...(opts.maxContext === undefined ? {} : { maxContext: opts.maxContext }),
    respond: (promptIds) => {
      prompts.push([...promptIds]);
      const text = replies[Math.min(i++, replies.length - 1)] ?? "";
      return embeddedTokenizer.encode(text);
    },
  });
  return Object.assign(engine, { prompts });
}
