/**
 * Which tokens each token of a forward pass attends to. A sequence is a chain (token t sees 0..t, causal
 * attention); a prefix trie packs many sequences, and each of its tokens sees only its own root-to-token
 * path, so every token's activations are those it has in each flat sequence through it.
 */
export interface AttentionLayout {
  ids: readonly number[];
  /** Position of each token (its index in every sequence through it): the position embedding it gets. */
  positions: Int32Array;
  /** Token i attends to `path[pathStart[i] .. pathStart[i + 1])`, root first, itself last. */
  pathStart: Int32Array;
  path: Int32Array;
}

export function chainLayout(ids: readonly number[]): AttentionLayout {
  const T = ids.length;
  const positions = new Int32Array(T);
  const pathStart = new Int32Array(T + 1);
  const path = new Int32Array((T * (T + 1)) / 2);
  let k = 0;
  for (let t = 0; t < T; t++) {
    positions[t] = t;
    pathStart[t] = k;
    for (let s = 0; s <= t; s++) path[k++] = s;
  }
  pathStart[T] = k;
  return { ids, positions, pathStart, path };
}

/** A trie's layout from each node's parent (-1 for a root); parents precede their children. */
export function treeLayout(ids: readonly number[], parents: readonly number[]): AttentionLayout {
  const N = ids.length;
  const positions = new Int32Array(N);
  const pathStart = new Int32Array(N + 1);
  let total = 0;
  for (let i = 0; i < N; i++) {
    const p = parents[i]!;
    positions[i] = p < 0 ? 0 : positions[p]! + 1;
    total += positions[i]! + 1;
  }
  const path = new Int32Array(total);
  let k = 0;
  for (let i = 0; i < N; i++) {
    pathStart[i] = k;
    const p = parents[i]!;
    if (p >= 0) {
      // The parent's path, then the node itself.
      path.copyWithin(k, pathStart[p]!, pathStart[p]! + positions[p]! + 1);
      k += positions[p]! + 1;
    }
    path[k++] = i;
  }
  pathStart[N] = k;
  return { ids, positions, pathStart, path };
}
