import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mergeTimelines } from "../../../server/training/merge-timelines.ts";
import { unmergedSequence } from "./helpers/loss-triples.ts";
import { recordEpisode, type ScriptStep, type StepKind } from "./helpers/record-episode.ts";
import { createTinyEngine } from "./helpers/training-parts.ts";

const KINDS: StepKind[] = ["append", "append", "append", "retry", "truncate", "edit", "strip", "overflow"];
const steps = fc.array(
  fc.record<ScriptStep>({
    kind: fc.constantFrom(...KINDS),
    out: fc.array(fc.integer({ min: 6, max: 100 }), { minLength: 1, maxLength: 6 }),
    stop: fc.boolean(),
    logprobs: fc.constant([-1]),
    reply: fc.constantFrom("ok", "no", "go on"),
    bumpVersion: fc.constant(false),
    pick: fc.nat(),
  }),
  { minLength: 1, maxLength: 8 },
);

/** Recomputed log-prob of every trained (context, token), keyed by the context's ids. */
async function scoreTrained(
  score: (ids: readonly number[]) => Promise<number[]>,
  seqs: ReadonlyArray<{ tokenIds: readonly number[]; lossMask: readonly number[] }>,
): Promise<Array<[string, number]>> {
  const out: Array<[string, number]> = [];
  for (const s of seqs) {
    const lp = await score(s.tokenIds);
    s.lossMask.forEach((m, i) => {
      if (m === 1) out.push([s.tokenIds.slice(0, i + 1).join(","), lp[i]!]);
    });
  }
  return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
}

describe("merged samples score like the separate calls under the embedded engine", () => {
  it("recomputed log-probs of every trained token agree within float tolerance", async () => {
    const engine = createTinyEngine({ context: 1024, seed: 7 });
    const score = (ids: readonly number[]) => engine.scoreTokens(ids);
    await fc.assert(
      fc.asyncProperty(steps, fc.constantFrom("text", "token"), async (script, match) => {
        const calls = recordEpisode(script, { episodeId: "e", agentId: "a" });
        const merged = mergeTimelines(calls, { match, ignoreTools: true, overflow: "drop" }).timelines;
        const separate = calls.filter((c) => c.finishReason !== "overflow").map(unmergedSequence);
        const a = await scoreTrained(score, merged);
        const b = await scoreTrained(score, separate);
        expect(a.map(([k]) => k)).toEqual(b.map(([k]) => k));
        const worst = Math.max(0, ...a.map(([, v], i) => Math.abs(v - b[i]![1])));
        expect(worst).toBeLessThan(1e-4);
      }),
      { numRuns: 25 },
    );
    await engine.close();
  });
});
