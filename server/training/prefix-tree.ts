/**
 * Token tries over training sequences: a shared prefix (a retried call, `n > 1` branches from one prompt,
 * a common system prompt) is stored once. A trie only says which tokens share a context; what trains
 * on each token (mask, behaviour log-prob, advantage, weight) stays on the flat samples, read along each
 * sample's root-to-leaf path, so a tree trainer computes exactly the flat batch's loss.
 */

/** A sequence to pack: its token ids. */
export interface PackableSequence {
  tokenIds: readonly number[];
}

/** The trie of some sequences. Node i holds one token; its context is the path from its root to it. */
export interface PrefixTree {
  /** Token of each node. Nodes are in insertion order: a parent always precedes its children. */
  tokenIds: number[];
  /** Parent of each node; -1 for a root (a sequence's first token). */
  parents: number[];
  /** For each packed sequence, the index of its last node (-1 for an empty sequence). */
  leaves: number[];
  flatTokens: number;
  treeTokens: number;
}

export interface PrefixSavings {
  sequences: number;
  flatTokens: number;
  treeTokens: number;
  /** Share of tokens a tree-packing trainer does not compute: 1 - tree / flat. */
  saved: number;
}

/** One trie over some of a batch's sequences. */
export interface TreePack {
  /** Indices of the packed sequences in the batch; `tree.leaves[k]` is sequence `indices[k]`'s leaf. */
  indices: number[];
  tree: PrefixTree;
}

/**
 * Packs sequences into a token trie. A sequence that is a prefix of another ends on an inner node; two
 * equal sequences share every node (the trie holds each (context, token) once however many train on it).
 */
export function buildPrefixTree(seqs: readonly PackableSequence[]): PrefixTree {
  const tokenIds: number[] = [];
  const parents: number[] = [];
  const children: Array<Map<number, number>> = [];
  const roots = new Map<number, number>();
  const leaves: number[] = [];
  let flatTokens = 0;
  for (const s of seqs) {
    flatTokens += s.tokenIds.length;
    let parent = -1;
    for (const token of s.tokenIds) {
      const level = parent < 0 ? roots : children[parent]!;
      let idx = level.get(token);
      if (idx === undefined) {
        idx = tokenIds.length;
        tokenIds.push(token);
        parents.push(parent);
        children.push(new Map());
        level.set(token, idx);
      }
      parent = idx;
    }
    leaves.push(parent);
  }
  return { tokenIds, parents, leaves, flatTokens, treeTokens: tokenIds.length };
}

/**
 * Splits a batch into tries of at most `maxSequences` sequences and `maxTokens` nodes each (a longer
 * sequence gets a trie of its own), after ordering the sequences by their tokens so that sequences
 * sharing a prefix are neighbours and land in the same trie.
 */
export function packPrefixTrees(seqs: readonly PackableSequence[], maxSequences: number, maxTokens = Infinity): TreePack[] {
  const order = seqs.map((_, i) => i).sort((a, b) => compareIds(seqs[a]!.tokenIds, seqs[b]!.tokenIds) || a - b);
  const per = Math.max(1, Math.floor(maxSequences));
  const groups: number[][] = [];
  let nodes = 0;
  let prev: readonly number[] = [];
  for (const i of order) {
    const ids = seqs[i]!.tokenIds;
    // In token order a sequence's longest prefix already in the trie is the one it shares with its predecessor.
    const added = ids.length - commonPrefix(prev, ids);
    const last = groups[groups.length - 1];
    if (last && last.length < per && nodes + added <= maxTokens) {
      last.push(i);
      nodes += added;
    } else {
      groups.push([i]);
      nodes = ids.length;
    }
    prev = ids;
  }
  return groups.map((indices) => ({ indices, tree: buildPrefixTree(indices.map((i) => seqs[i]!)) }));
}

export function measurePrefixSavings(seqs: readonly PackableSequence[]): PrefixSavings {
  const tree = buildPrefixTree(seqs);
  return savings(seqs.length, tree.flatTokens, tree.treeTokens);
}

/** What a set of packs computes against the flat sequences. */
export function measurePackSavings(packs: readonly TreePack[]): PrefixSavings {
  let flat = 0;
  let tree = 0;
  let n = 0;
  for (const p of packs) {
    flat += p.tree.flatTokens;
    tree += p.tree.treeTokens;
    n += p.indices.length;
  }
  return savings(n, flat, tree);
}

/** The nodes of one packed sequence, root to leaf: entry t is the node of its token at position t. */
export function readTreePath(tree: PrefixTree, leaf: number): number[] {
  const out: number[] = [];
  for (let i = leaf; i >= 0; i = tree.parents[i]!) out.push(i);
  return out.reverse();
}

/** Depth of each node: the position its token has in every sequence through it. */
export function computeDepths(tree: PrefixTree): number[] {
  const depths = new Array<number>(tree.parents.length);
  tree.parents.forEach((p, i) => (depths[i] = p < 0 ? 0 : depths[p]! + 1));
  return depths;
}

function savings(sequences: number, flatTokens: number, treeTokens: number): PrefixSavings {
  return { sequences, flatTokens, treeTokens, saved: flatTokens === 0 ? 0 : 1 - treeTokens / flatTokens };
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let k = 0;
  while (k < n && a[k] === b[k]) k++;
  return k;
}

function compareIds(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}
