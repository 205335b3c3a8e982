import { describe, expect, it } from "vitest";
import { mergeTimelines } from "../../../server/training/merge-timelines.ts";
import {
  buildPrefixTree,
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

  it("packs sequences sharing a prefix into the same trie, at most N per trie", () => {
    const seqs = [seq([5, 1]), seq([1, 2, 3]), seq([5, 2]), seq([1, 2, 4])];
    const packs = packPrefixTrees(seqs, 2);
    expect(packs.map((p) => p.indices)).toEqual([[1, 3], [0, 2]]);
    expect(measurePackSavings(packs)).toMatchObject({ sequences: 4, flatTokens: 10, treeTokens: 7 });
    // A token budget closes a trie early: [1,2,3] + [1,2,4] is 4 nodes, over a budget of 3.
    expect(packPrefixTrees(seqs, 4, 3).map((p) => p.indices)).toEqual([[1], [3], [0, 2]]);
    for (const p of packs) {
      p.indices.forEach((i, k) => expect(readTreePath(p.tree, p.tree.leaves[k]!).map((n) => p.tree.tokenIds[n])).toEqual(seqs[i]!.tokenIds));
    }
  });

  it("measures what a retried call's timelines would save", () => {
    const calls = recordEpisode([step("first answer"), step("second"), step("retry", "ok", { kind: "retry" }), step("x")], {
      episodeId: "e",
      agentId: "a",
    });
    const { timelines } = mergeTimelines(calls, { match: "token", ignoreTools: true, overflow: "drop" });
    expect(timelines).toHaveLength(2);
    const s = measurePrefixSavings(timelines);
    const shared = calls[1]!.segments.flatMap((x) => x.ids).length + calls[1]!.headerIds.length;
    expect(s.flatTokens - s.treeTokens).toBe(shared);
  });
});
