import { canonicalText } from "./canonical-text.ts";
import type { ChatTurnMessage } from "./tokenizer.ts";

/**
 * The ids of an assistant message that repeats an earlier generation: that generation's exact ids
 * (header + output), completed with the template's end of turn when the output lacks it. Null when the
 * message is not a recorded generation.
 */
export function spliceGeneration(
  message: ChatTurnMessage,
  generated: ReadonlyMap<string, readonly number[]> | undefined,
  endOfTurn: { endId: number; afterEndIds: readonly number[] },
): number[] | null {
  if (message.role !== "assistant" || !generated) return null;
  const ids = generated.get(canonicalText(message));
  if (!ids) return null;
  const out = [...ids];
  if (out[out.length - 1] !== endOfTurn.endId) out.push(endOfTurn.endId);
  out.push(...endOfTurn.afterEndIds);
  return out;
}
