import { describe, expect, it } from "vitest";
import { mergeTimelines } from "../../../server/training/merge-timelines.ts";
import { buildPrefixTree, measurePrefixSavings, readTreePath } from "../../../server/training/prefix-tree.ts";
import { recordEpisode, step } from "./helpers/record-episode.ts";

const seq = (tokenIds: number[], lossMask: number[]) => ({ tokenIds, lossMask, logprobs: lossMask.map((m) => (m ? -0.5 : 0)) });

describe("prefix-tree packing", () => {
  it("stores a shared prefix once and reads every sequence back", () => {
    const seqs = [seq([1, 2, 3, 4], [0, 0, 1, 1]), seq([1, 2, 5], [0, 0, 1]), seq([7], [1])];
    const tree = buildPrefixTree(seqs);
    expect(tree).toMatchObject({ flatTokens: 8, treeTokens: 6 });
    expect(tree.leaves.map((l) => readTreePath(tree, l))).toEqual(seqs.map((s) => s.tokenIds));
    for (const [i, n] of tree.nodes.entries()) expect(n.parent).toBeLessThan(i);
    expect(measurePrefixSavings(seqs).saved).toBeCloseTo(0.25, 12);
  });

  it("counts a (context, token) trained twice as two losses, and one trained once in one branch as one", () => {
    const tree = buildPrefixTree([seq([1, 2, 3], [0, 1, 1]), seq([1, 2, 4], [0, 0, 1]), seq([1, 2, 3], [0, 1, 1])]);
    const two = tree.nodes[1]!;
    expect([two.token, two.mask, two.lossCount]).toEqual([2, 1, 2]);
    expect(tree.nodes.map((n) => n.lossCount)).toEqual([0, 2, 2, 1]);
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
