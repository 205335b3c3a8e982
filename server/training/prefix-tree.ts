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
 * What training a trie costs, in attention entries (a node attends to its depth + 1 tokens, so a trie
 * costs its nodes' summed path lengths) plus `nodeCost` per node (the per-token work: projections, MLP,
 * output). A trie costs at most `maxCost`; a sequence that costs more alone gets a trie of its own.
 */
export interface TrieBudget {
  nodeCost: number;
  maxCost: number;
}

/** What a chain of `length` tokens costs at `nodeCost` per token: a sequence that shares nothing. */
export function chainCost(nodeCost: number, length: number): number {
  return nodeCost * length + (length * (length + 1)) / 2;
}

/**
 * Splits a batch into tries within `budget`, sharing as many prefixes as it can. Sequences are ordered by
 * their tokens, so a sequence's longest prefix in the batch is the one it shares with its predecessor.
 * The sequences sharing a first token (one prompt's branches, one history's retries) stay in one trie
 * when they fit; a group that does not is split where its sequences share least (its top branch point,
 * then the next), so only that short prefix is carried twice. The pieces fill tries in order.
 */
export function packPrefixTrees(seqs: readonly PackableSequence[], budget: TrieBudget): TreePack[] {
  const order = seqs.map((_, i) => i).sort((a, b) => compareIds(seqs[a]!.tokenIds, seqs[b]!.tokenIds) || a - b);
  const n = order.length;
  const len = order.map((i) => seqs[i]!.tokenIds.length);
  // lcp[k]: tokens sequence order[k] shares with order[k - 1] (0 for the first).
  const lcp = order.map((i, k) => (k === 0 ? 0 : commonPrefix(seqs[order[k - 1]!]!.tokenIds, seqs[i]!.tokenIds)));
  const cost = (length: number) => chainCost(budget.nodeCost, length);
  // Cost of the run [lo, hi) as one trie.
  const runCost = (lo: number, hi: number) => {
    let c = cost(len[lo]!);
    for (let k = lo + 1; k < hi; k++) c += cost(len[k]!) - cost(lcp[k]!);
    return c;
  };
  // Pieces: runs of sequences that go into a trie together, split at their least shared prefix.
  const pieces: Array<[number, number]> = [];
  const split = (lo: number, hi: number): void => {
    if (hi - lo === 1 || runCost(lo, hi) <= budget.maxCost) {
      pieces.push([lo, hi]);
      return;
    }
    let least = Infinity;
    for (let k = lo + 1; k < hi; k++) least = Math.min(least, lcp[k]!);
    let start = lo;
    for (let k = lo + 1; k <= hi; k++) {
      if (k === hi || lcp[k] === least) {
        split(start, k);
        start = k;
      }
    }
  };
  let start = 0;
  for (let k = 1; k <= n; k++) {
    if (k === n || lcp[k] === 0) {
      split(start, k);
      start = k;
    }
  }
  // Tries: runs [lo, hi) of the order.
  const tries: Array<[number, number]> = [];
  let used = 0;
  for (const [lo, hi] of pieces) {
    const last = tries[tries.length - 1];
    // Next to its predecessor in the trie, a piece shares their common prefix.
    const c = runCost(lo, hi) - (last ? cost(lcp[lo]!) : 0);
    if (last && used + c <= budget.maxCost) {
      last[1] = hi;
      used += c;
    } else {
      tries.push([lo, hi]);
      used = runCost(lo, hi);
    }
  }
  return tries.map(([lo, hi]) => ({ indices: order.slice(lo, hi), tree: buildSortedTree(seqs, order, lcp, lo, hi) }));
}

/**
 * `buildPrefixTree` of the sequences `order[lo .. hi)`, sorted by their tokens with `lcp` their shared
 * prefixes: each sequence's nodes are its predecessor's up to their common prefix, then new ones.
 */
function buildSortedTree(seqs: readonly PackableSequence[], order: readonly number[], lcp: readonly number[], lo: number, hi: number): PrefixTree {
  const tokenIds: number[] = [];
  const parents: number[] = [];
  const leaves: number[] = [];
  // path[t]: the node of the previous sequence's token t.
  const path: number[] = [];
  let flatTokens = 0;
  for (let k = lo; k < hi; k++) {
    const ids = seqs[order[k]!]!.tokenIds;
    flatTokens += ids.length;
    const shared = k === lo ? 0 : lcp[k]!;
    path.length = shared;
    for (let t = shared; t < ids.length; t++) {
      path.push(tokenIds.length);
      tokenIds.push(ids[t]!);
      parents.push(t > 0 ? path[t - 1]! : -1);
    }
    leaves.push(ids.length > 0 ? path[ids.length - 1]! : -1);
  }
  return { tokenIds, parents, leaves, flatTokens, treeTokens: tokenIds.length };
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
