import { packPrefixTrees, readTreePath } from "../../training/prefix-tree.ts";
import type { TrainSample } from "../../training/sample.ts";
import { treeLayout } from "./attention-layout.ts";
import type { TreeTrainPack } from "./train-step.ts";

/**
 * A batch's samples as prefix tries of at most `maxSamples` samples (the micro-batch) and `maxTokens`
 * nodes each, samples that share a prefix in the same trie. Each pack keeps its samples as they are,
 * with their paths.
 */
export function packTreeBatch(samples: readonly TrainSample[], maxSamples: number, maxTokens = Infinity): TreeTrainPack[] {
  return packPrefixTrees(samples, maxSamples, maxTokens).map(({ indices, tree }) => ({
    layout: treeLayout(tree.tokenIds, tree.parents),
    parents: tree.parents,
    samples: indices.map((i) => samples[i]!),
    paths: tree.leaves.map((leaf) => readTreePath(tree, leaf)),
  }));
}
