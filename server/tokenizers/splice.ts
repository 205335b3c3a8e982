import { canonicalText } from "./canonical-text.ts";
import type { ChatTurnMessage } from "./tokenizer.ts";

type EndOfTurn = { endId: number; afterEndIds: readonly number[] };

/**
 * Each generation's spliced ids, per end of turn (a tokenizer's): an episode's later prompts repeat its
 * earlier generations, and handing out the same array each time (as the tokenizers' caches do for other
 * messages) spares a copy per prompt and lets the tracker send the segment to its writer thread once
 * (server/tracker/call-wire.ts). Kept as long as the generation's ids are (the tracker's, per live episode).
 */
const splicedIds = new WeakMap<EndOfTurn, WeakMap<readonly number[], number[]>>();

/**
 * The ids of an assistant message that repeats an earlier generation: that generation's exact ids
 * (header + output), completed with the template's end of turn when the output lacks it. Null when the
 * message is not a recorded generation. The same array for the same generation: never written to.
 */
export function spliceGeneration(message: ChatTurnMessage, generated: ReadonlyMap<string, readonly number[]> | undefined, endOfTurn: EndOfTurn): number[] | null {
  if (message.role !== "assistant" || !generated) return null;
  const ids = generated.get(canonicalText(message));
  if (!ids) return null;
  let byGeneration = splicedIds.get(endOfTurn);
  if (byGeneration === undefined) splicedIds.set(endOfTurn, (byGeneration = new WeakMap()));
  let out = byGeneration.get(ids);
  if (out === undefined) {
    out = [...ids];
    if (out[out.length - 1] !== endOfTurn.endId) out.push(endOfTurn.endId);
    out.push(...endOfTurn.afterEndIds);
    byGeneration.set(ids, out);
  }
  return out;
}
