import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type MergeOptions, mergeTimelines } from "../../../server/training/merge-timelines.ts";
import { lossTriples, unmergedSequence } from "./helpers/loss-triples.ts";
import { recordEpisode, type ScriptStep, type StepKind } from "./helpers/record-episode.ts";

function stepArb(kinds: readonly StepKind[]): fc.Arbitrary<ScriptStep> {
  return fc.record({
    kind: fc.oneof(
      { arbitrary: fc.constant<StepKind>("append"), weight: 6 },
      { arbitrary: fc.constantFrom(...kinds), weight: 3 },
    ),
    out: fc.array(fc.integer({ min: 6, max: 100 }), { minLength: 1, maxLength: 8 }),
    stop: fc.boolean(),
    logprobs: fc.array(fc.double({ min: -8, max: 0, noNaN: true }), { minLength: 1, maxLength: 9 }),
    reply: fc.array(fc.integer({ min: 97, max: 122 }), { maxLength: 6 }).map((cs) => String.fromCharCode(...cs)),
    bumpVersion: fc.boolean(),
    pick: fc.nat(),
  });
}

const EDITS: StepKind[] = ["retry", "truncate", "edit", "strip", "overflow", "duplicate"];
const episodes = (kinds: readonly StepKind[]) => fc.array(stepArb(kinds), { minLength: 1, maxLength: 14 });

function check(steps: ScriptStep[], opts: MergeOptions): void {
  const calls = recordEpisode(steps, { episodeId: "e", agentId: "a" });
  const { timelines, stats } = mergeTimelines(calls, opts);
  const trained = calls.filter((c) => opts.overflow === "keep" || c.finishReason !== "overflow");
  expect(lossTriples(timelines)).toEqual(lossTriples(trained.map(unmergedSequence)));
  for (const t of timelines) {
    expect(t.lossMask).toHaveLength(t.tokenIds.length);
    expect(t.logprobs).toHaveLength(t.tokenIds.length);
    expect(t.versions).toHaveLength(t.tokenIds.length);
    const stray = t.lossMask.filter((m, i) => m === 0 && (t.logprobs[i] !== 0 || t.versions[i] !== -1));
    expect(stray).toHaveLength(0);
  }
  expect(stats.mergedTokens).toBeLessThanOrEqual(stats.unmergedTokens);
  expect(new Set(timelines.flatMap((t) => t.callIds)).size).toBe(timelines.flatMap((t) => t.callIds).length);
}

describe("timeline merging keeps what the loss sees", () => {
  it("token matching: any history (retries, truncation, edits, stripped replies, tools, overflow)", () => {
    fc.assert(
      fc.property(episodes([...EDITS, "tools"]), fc.boolean(), fc.constantFrom("drop", "keep"), (steps, ignoreTools, overflow) =>
        check(steps, { match: "token", ignoreTools, overflow }),
      ),
      { numRuns: 150 },
    );
  });

  // Regression (issue 18, items 6 and 7): text matching with tool changes and repeated generations.
  it("text matching: any history (tools and repeated generations too), ignoreTools or not", () => {
    fc.assert(
      fc.property(episodes([...EDITS, "tools"]), fc.boolean(), fc.constantFrom("drop", "keep"), (steps, ignoreTools, overflow) =>
        check(steps, { match: "text", ignoreTools, overflow }),
      ),
      { numRuns: 200 },
    );
  });

  it("append-only histories merge into exactly one sample", () => {
    fc.assert(
      fc.property(episodes(["append"]), (steps) => {
        const calls = recordEpisode(steps, { episodeId: "e", agentId: "a" });
        for (const match of ["text", "token"] as const) {
          expect(mergeTimelines(calls, { match, ignoreTools: true, overflow: "drop" }).timelines).toHaveLength(1);
        }
      }),
      { numRuns: 50 },
    );
  });
});
