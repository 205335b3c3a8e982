/** A sequence to pack: token ids and, per token, whether the loss sees it. */
export interface PackableSequence {
  tokenIds: readonly number[];
  lossMask: readonly number[];
  logprobs: readonly number[];
}

/** One token of the tree; `parent` is -1 for a root token. */
export interface PrefixTreeNode {
  token: number;
  parent: number;
  /** 1 when any packed sequence trains on this token in this context. */
  mask: number;
  logprob: number;
  /** How many packed sequences train on this (context, token): the weight a tree trainer gives it. */
  lossCount: number;
}

export interface PrefixTree {
  /** Nodes in depth-first insertion order: a parent always precedes its children. */
  nodes: PrefixTreeNode[];
  /** For each packed sequence, the index of its last node (-1 for an empty sequence). */
  leaves: number[];
  flatTokens: number;
  treeTokens: number;
}

export interface PrefixSavings {
  sequences: number;
  flatTokens: number;
  treeTokens: number;
  /** Share of tokens a tree-packing trainer would not compute: 1 - tree / flat. */
  saved: number;
}

/**
 * Packs sequences into a token trie so a shared prefix (a retried call, a branch, a common system prompt)
 * is represented once. The same (context, token) trained in two sequences is one triple seen twice, so it
 * keeps `lossCount` 2 rather than being deduplicated away.
 */
export function buildPrefixTree(seqs: readonly PackableSequence[]): PrefixTree {
  const nodes: PrefixTreeNode[] = [];
  const children: Array<Map<number, number>> = [];
  const roots = new Map<number, number>();
  const leaves: number[] = [];
  let flatTokens = 0;
  for (const s of seqs) {
    flatTokens += s.tokenIds.length;
    let parent = -1;
    for (let i = 0; i < s.tokenIds.length; i++) {
      const token = s.tokenIds[i]!;
      const level = parent < 0 ? roots : children[parent]!;
      let idx = level.get(token);
      if (idx === undefined) {
        idx = nodes.length;
        nodes.push({ token, parent, mask: 0, logprob: 0, lossCount: 0 });
        children.push(new Map());
        level.set(token, idx);
      }
      if (s.lossMask[i] === 1) {
        const node = nodes[idx]!;
        node.mask = 1;
        node.logprob = s.logprobs[i] ?? 0;
        node.lossCount++;
      }
      parent = idx;
    }
    leaves.push(parent);
  }
  return { nodes, leaves, flatTokens, treeTokens: nodes.length };
}

export function measurePrefixSavings(seqs: readonly PackableSequence[]): PrefixSavings {
  const tree = buildPrefixTree(seqs);
  return {
    sequences: seqs.length,
    flatTokens: tree.flatTokens,
    treeTokens: tree.treeTokens,
    saved: tree.flatTokens === 0 ? 0 : 1 - tree.treeTokens / tree.flatTokens,
  };
}

/** Reads one packed sequence back out of the tree (root to its leaf). */
export function readTreePath(tree: PrefixTree, leaf: number): number[] {
  const out: number[] = [];
  for (let i = leaf; i >= 0; i = tree.nodes[i]!.parent) out.push(tree.nodes[i]!.token);
  return out.reverse();
}
