import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { promptIds } from "../../../server/tokenizers/prompt-ids.ts";
import { mergeTimelines } from "../../../server/training/merge-timelines.ts";
import {
  buildPrefixTree,
  chainCost,
  computeDepths,
  measurePackSavings,
  measurePrefixSavings,
  packPrefixTrees,
  readTreePath,
} from "../../../server/training/prefix-tree.ts";
import { recordEpisode, step } from "./helpers/record-episode.ts";

const seq = (tokenIds: number[], _lossMask?: number[]) => ({ tokenIds });

describe("prefix-tree packing", () => {
  it("stores a shared prefix once and reads every sequence back", () => {
    const seqs = [seq([1, 2, 3, 4]), seq([1, 2, 5]), seq([7])];
    const tree = buildPrefixTree(seqs);
    expect(tree).toMatchObject({ flatTokens: 8, treeTokens: 6 });
    expect(tree.leaves.map((l) => readTreePath(tree, l).map((n) => tree.tokenIds[n]))).toEqual(seqs.map((s) => s.tokenIds));
    for (const [i, p] of tree.parents.entries()) expect(p).toBeLessThan(i);
    expect(computeDepths(tree)).toEqual([0, 1, 2, 3, 2, 0]);
    expect(measurePrefixSavings(seqs).saved).toBeCloseTo(0.25, 12);
  });

  it("ends a sequence that is another's prefix on an inner node, and shares every node of a duplicate", () => {
    const tree = buildPrefixTree([seq([1, 2, 3]), seq([1, 2]), seq([1, 2, 3]), seq([])]);
    expect(tree.treeTokens).toBe(3);
    expect(tree.leaves).toEqual([2, 1, 2, -1]);
  });

  it("packs sequences sharing a prefix into the same trie, within a cost budget", () => {
    const seqs = [seq([5, 1]), seq([1, 2, 3]), seq([5, 2]), seq([1, 2, 4])];
    // nodeCost 0: a trie costs its attention entries, [1,2,3] + [1,2,4] 1+2+3+3 = 9, [5,1] + [5,2] 1+2+2 = 5.
    const packs = packPrefixTrees(seqs, { nodeCost: 0, maxCost: 9 });
    expect(packs.map((p) => p.indices)).toEqual([[1, 3], [0, 2]]);
    expect(measurePackSavings(packs)).toMatchObject({ sequences: 4, flatTokens: 10, treeTokens: 7 });
    expect(packPrefixTrees(seqs, { nodeCost: 0, maxCost: 14 }).map((p) => p.indices)).toEqual([[1, 3, 0, 2]]);
    // Under 9, [1,2,3] + [1,2,4] is split, each carrying [1,2].
    expect(packPrefixTrees(seqs, { nodeCost: 0, maxCost: 8 }).map((p) => p.indices)).toEqual([[1], [3], [0, 2]]);
    for (const p of packs) {
      p.indices.forEach((i, k) => expect(readTreePath(p.tree, p.tree.leaves[k]!).map((n) => p.tree.tokenIds[n])).toEqual(seqs[i]!.tokenIds));
    }
  });

  it("keeps a history's retried branches in one trie when it fits, rather than filling the previous trie", () => {
    // Two histories, each a long timeline and two retries branching from it. Both do not fit one trie;
    // packing in token order alone put the second's first branch beside the first history, so its
    // prefix was computed twice (the 1.54x of bench/merge on "appworld, 10% of calls retried").
    const history = (first: number) => Array.from({ length: 40 }, (_, t) => first + (t % 7));
    const seqs = [0, 100].flatMap((first) => {
      const h = history(first);
      return [seq(h), seq([...h.slice(0, 10), 99]), seq([...h.slice(0, 30), 98, 97])];
    });
    const budget = { nodeCost: 4, maxCost: 1.5 * chainCost(4, 44) };
    const packs = packPrefixTrees(seqs, budget);
    expect(packs.map((p) => [...p.indices].sort())).toEqual([[0, 1, 2], [3, 4, 5]]);
    expect(measurePackSavings(packs).treeTokens).toBe(measurePrefixSavings(seqs).treeTokens);
  });

  it("packs every sequence once, within the budget unless alone, splitting where sequences share least (property)", () => {
    const seqArb = fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 0, maxLength: 12 });
    fc.assert(
      fc.property(fc.array(seqArb, { minLength: 1, maxLength: 20 }), fc.constantFrom(0, 1, 8), fc.integer({ min: 1, max: 600 }), (ids, nodeCost, maxCost) => {
        const seqs = ids.map((t) => seq(t));
        const packs = packPrefixTrees(seqs, { nodeCost, maxCost });
        expect(packs.flatMap((p) => p.indices).sort((a, b) => a - b)).toEqual(seqs.map((_, i) => i));
        for (const p of packs) {
          expect(p.tree).toEqual(buildPrefixTree(p.indices.map((i) => seqs[i]!)));
          const depths = computeDepths(p.tree);
          const cost = nodeCost * p.tree.treeTokens + depths.reduce((a, d) => a + d + 1, 0);
          if (p.indices.length > 1) expect(cost).toBeLessThanOrEqual(maxCost);
          p.indices.forEach((i, k) => expect(readTreePath(p.tree, p.tree.leaves[k]!).map((n) => p.tree.tokenIds[n])).toEqual(seqs[i]!.tokenIds));
        }
        // A budget the whole batch fits in gives the one-trie ideal.
        const all = buildPrefixTree(seqs);
        const whole = nodeCost * all.treeTokens + computeDepths(all).reduce((a, d) => a + d + 1, 0);
        if (whole <= maxCost) expect(packs).toHaveLength(1);
      }),
      { numRuns: 200, seed: 28 },
    );
  });

  it("measures what a retried call's timelines would save", () => {
    const calls = recordEpisode([step("first answer"), step("second"), step("retry", "ok", { kind: "retry" }), step("x")], {
      episodeId: "e",
      agentId: "a",
    });
    const { timelines } = mergeTimelines(calls, { match: "token", ignoreTools: true, overflow: "drop" });
    expect(timelines).toHaveLength(2);
    const s = measurePrefixSavings(timelines);
    const shared = promptIds(calls[1]!).length;
    expect(s.flatTokens - s.treeTokens).toBe(shared);
  });
});
