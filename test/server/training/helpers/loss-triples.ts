import { promptIds } from "../../../../server/tokenizers/prompt-ids.ts";
import type { CallRecord } from "../../../../server/tracker/call-record.ts";

export interface TrainedSequence {
  tokenIds: readonly number[];
  lossMask: readonly number[];
  logprobs: readonly number[];
  versions: readonly number[];
}

/** The sequence one call trains on when nothing is merged: its prompt plus its output. */
export function unmergedSequence(c: CallRecord): TrainedSequence {
  const prompt = promptIds(c);
  return {
    tokenIds: [...prompt, ...c.outputIds],
    lossMask: [...prompt.map(() => 0), ...c.outputIds.map(() => 1)],
    logprobs: [...prompt.map(() => 0), ...c.outputLogprobs],
    versions: [...prompt.map(() => -1), ...c.outputIds.map(() => c.version)],
  };
}

/**
 * The multiset of (context, token, log-prob, version) the loss sees, as sorted keys. A context is named by
 * two polynomial hashes of its ids plus its length, so long contexts stay cheap to compare.
 */
export function lossTriples(seqs: readonly TrainedSequence[]): string[] {
  const out: string[] = [];
  for (const s of seqs) {
    let h1 = 0;
    let h2 = 0;
    for (let i = 0; i < s.tokenIds.length; i++) {
      const t = s.tokenIds[i]!;
      if (s.lossMask[i] === 1) out.push(`${h1}.${h2}.${i}|${t}|${s.logprobs[i]}|${s.versions[i]}`);
      h1 = (Math.imul(h1, 1_000_003) + t + 1) >>> 0;
      h2 = (Math.imul(h2, 998_244_353) + t + 7) >>> 0;
    }
  }
  return out.sort();
}
