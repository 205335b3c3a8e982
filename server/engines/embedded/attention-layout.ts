/**
 * Which tokens each token of a forward pass attends to. A sequence is a chain (token t sees 0..t, causal
 * attention); a prefix trie packs many sequences, and each of its tokens sees only its own root-to-token
 * path, so every token's activations are those it has in each flat sequence through it.
 *
 * Paths are kept as index ranges, not lists: tokens come in segments (runs of consecutive indices, each
 * token's parent the one before it), and a token sees its segment's ancestor ranges, then its segment
 * from its first token to itself. A chain is one segment; a trie built in token order has about one per
 * sequence. The attention kernels walk ranges of contiguous keys, and a layout costs O(tokens) to build.
 */
export interface AttentionLayout {
  ids: readonly number[];
  /** Position of each token (its index in every sequence through it): the position embedding it gets. */
  positions: Int32Array;
  /** Token i's attention weights are entries `pathStart[i] .. pathStart[i + 1])` of a head's row, one per path token, root first. */
  pathStart: Int32Array;
  /** Segment s holds tokens `segmentStart[s] .. segmentStart[s + 1])`; the last entry is the token count. */
  segmentStart: Int32Array;
  /** Segment s's ancestor ranges are pairs `ranges[2r], ranges[2r + 1]` (from, to exclusive) for r in `rangeStart[s] .. rangeStart[s + 1])`, root first. */
  rangeStart: Int32Array;
  ranges: Int32Array;
}

export function chainLayout(ids: readonly number[]): AttentionLayout {
  const T = ids.length;
  const positions = new Int32Array(T);
  const pathStart = new Int32Array(T + 1);
  for (let t = 0; t < T; t++) {
    positions[t] = t;
    pathStart[t + 1] = pathStart[t]! + t + 1;
  }
  return { ids, positions, pathStart, segmentStart: Int32Array.of(0, T), rangeStart: Int32Array.of(0, 0), ranges: new Int32Array(0) };
}

/** A trie's layout from each node's parent (-1 for a root); parents precede their children. */
export function treeLayout(ids: readonly number[], parents: readonly number[]): AttentionLayout {
  const N = ids.length;
  const positions = new Int32Array(N);
  const pathStart = new Int32Array(N + 1);
  const segmentOf = new Int32Array(N);
  const segmentStart: number[] = [];
  const rangeStart: number[] = [0];
  const ranges: number[] = [];
  for (let i = 0; i < N; i++) {
    const p = parents[i]!;
    positions[i] = p < 0 ? 0 : positions[p]! + 1;
    pathStart[i + 1] = pathStart[i]! + positions[i]! + 1;
    if (i > 0 && p === i - 1) {
      segmentOf[i] = segmentOf[p]!;
      continue;
    }
    segmentOf[i] = segmentStart.length;
    segmentStart.push(i);
    if (p >= 0) {
      // The parent's segment's ancestors, then that segment up to the parent.
      const ps = segmentOf[p]!;
      for (let r = rangeStart[ps]!; r < rangeStart[ps + 1]!; r++) ranges.push(ranges[2 * r]!, ranges[2 * r + 1]!);
      ranges.push(segmentStart[ps]!, p + 1);
    }
    rangeStart.push(ranges.length / 2);
  }
  segmentStart.push(N);
  return {
    ids,
    positions,
    pathStart,
    segmentStart: Int32Array.from(segmentStart),
    rangeStart: Int32Array.from(rangeStart),
    ranges: Int32Array.from(ranges),
  };
}

/** The tokens token `i` attends to, root first, itself last. */
export function readLayoutPath(layout: AttentionLayout, i: number): number[] {
  let s = 0;
  while (layout.segmentStart[s + 1]! <= i) s++;
  const out: number[] = [];
  for (let r = layout.rangeStart[s]!; r < layout.rangeStart[s + 1]!; r++) {
    for (let k = layout.ranges[2 * r]!; k < layout.ranges[2 * r + 1]!; k++) out.push(k);
  }
  for (let k = layout.segmentStart[s]!; k <= i; k++) out.push(k);
  return out;
}
