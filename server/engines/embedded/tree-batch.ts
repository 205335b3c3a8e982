import { chainCost, packPrefixTrees, readTreePath, type TrieBudget } from "../../training/prefix-tree.ts";
import type { TrainSample } from "../../training/sample.ts";
import { treeLayout } from "./attention-layout.ts";
import type { ModelShape } from "./layout.ts";
import type { TreeTrainPack } from "./train-step.ts";

/** A prefix trie costs at most this many flat samples of a full context (its compute and activations). */
export const TREE_CONTEXTS_PER_PACK = 2;

/**
 * What a trie costs this model to train, in attention entries: per layer an entry (a token attending to
 * one path token) is about 6·dim multiply-adds forward and back, a token 3·(4·dim² + 2·dim·mlpDim) in its
 * projections and MLP, plus 3·vocab·dim once in the output. A trie may cost `TREE_CONTEXTS_PER_PACK` full
 * contexts.
 */
export function treeBudget(shape: ModelShape): TrieBudget {
  const nodeCost = 2 * shape.dim + shape.mlpDim + shape.vocabSize / (2 * shape.layers);
  return { nodeCost, maxCost: TREE_CONTEXTS_PER_PACK * chainCost(nodeCost, shape.context) };
}

/**
 * A batch's samples as prefix tries within `budget`: the samples that share a prefix in one trie (split
 * where they share least when they do not fit). Each pack keeps its samples as they are, with their paths.
 */
export function packTreeBatch(samples: readonly TrainSample[], budget: TrieBudget): TreeTrainPack[] {
  return packPrefixTrees(samples, budget).map(({ indices, tree }) => ({
    layout: treeLayout(tree.tokenIds, tree.parents),
    parents: tree.parents,
    samples: indices.map((i) => samples[i]!),
    paths: tree.leaves.map((leaf) => readTreePath(tree, leaf)),
  }));
}
