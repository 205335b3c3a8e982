import type { AttentionLayout } from "./attention-layout.ts";

/** Queries per block: the keys all of a block's queries see are walked once for the four. */
export const BLOCK = 4;

/** Called with each key range a..b (exclusive) of a path, in path order; j is the range's first path entry. */
export type RangeVisit = (a: number, b: number, j: number) => void;

/**
 * One head's block of up to `BLOCK` consecutive queries of a segment, with the head's geometry in a qkv
 * row ([tokens, 3·dim]: q, k, v). `forEachBlock` moves one object through every block.
 */
export class QueryBlock {
  readonly hd: number;
  /** A qkv row's length: 3·D. */
  readonly S: number;
  /** 1 / √hd. */
  readonly scale: number;
  h = 0;
  /** Where this head's q, k and v start in a qkv row; `qo` is also where its output starts in an output row. */
  qo = 0;
  ko = 0;
  vo = 0;
  /** This head's first entry in a [heads, path entries] array. */
  rowBase = 0;
  /** The segment's first token and its ancestor ranges r0..r1 of the layout's `ranges`. */
  first = 0;
  r0 = 0;
  r1 = 0;
  /** The block's first query and its number of queries. */
  t0 = 0;
  u = 0;
  /** Path entries every query of the block sees (t0's path): 0 for a block of fewer than `BLOCK` queries. */
  shared = 0;
  /** With `shared`: the four queries' first path entries (`entry(t0 + i)`). */
  e0 = 0;
  e1 = 0;
  e2 = 0;
  e3 = 0;

  constructor(
    private readonly layout: AttentionLayout,
    readonly D: number,
    readonly H: number,
  ) {
    this.hd = D / H;
    this.S = 3 * D;
    this.scale = 1 / Math.sqrt(this.hd);
  }

  /** Query q's first entry in this head's row. */
  entry(q: number): number {
    return this.rowBase + this.layout.pathStart[q]!;
  }

  /** The keys every query of the block sees (with `shared`): the ancestor ranges, then first..t0. */
  forSharedKeys(visit: RangeVisit): void {
    this.forPath(this.t0 + 1, visit);
  }

  /** Query q's keys that `forSharedKeys` leaves out: t0 + 1..q after the shared ones, or (no `shared`) its whole path. */
  forOwnKeys(q: number, visit: RangeVisit): void {
    if (this.shared > 0) visit(this.t0 + 1, q + 1, this.shared);
    else this.forPath(q + 1, visit);
  }

  /** The path of the segment's query end - 1: the ancestor ranges, then first..end. */
  private forPath(end: number, visit: RangeVisit): void {
    const { ranges } = this.layout;
    let j = 0;
    for (let r = this.r0; r < this.r1; r++) {
      const a = ranges[2 * r]!;
      const b = ranges[2 * r + 1]!;
      visit(a, b, j);
      j += b - a;
    }
    visit(this.first, end, j);
  }
}

/** Calls `visit` for each head's blocks of each segment, in order, with the same `QueryBlock` set to the block. */
export function forEachBlock(layout: AttentionLayout, D: number, H: number, visit: (blk: QueryBlock) => void): void {
  const { pathStart, positions, segmentStart, rangeStart } = layout;
  const P = pathStart[pathStart.length - 1]!;
  const blk = new QueryBlock(layout, D, H);
  for (let h = 0; h < H; h++) {
    blk.h = h;
    blk.qo = h * blk.hd;
    blk.ko = D + h * blk.hd;
    blk.vo = 2 * D + h * blk.hd;
    blk.rowBase = h * P;
    for (let s = 0; s + 1 < segmentStart.length; s++) {
      const end = segmentStart[s + 1]!;
      blk.first = segmentStart[s]!;
      blk.r0 = rangeStart[s]!;
      blk.r1 = rangeStart[s + 1]!;
      for (let t0 = blk.first; t0 < end; t0 += BLOCK) {
        blk.t0 = t0;
        blk.u = Math.min(BLOCK, end - t0);
        blk.shared = blk.u === BLOCK ? positions[t0]! + 1 : 0;
        if (blk.shared > 0) {
          blk.e0 = blk.entry(t0);
          blk.e1 = blk.entry(t0 + 1);
          blk.e2 = blk.entry(t0 + 2);
          blk.e3 = blk.entry(t0 + 3);
        }
        visit(blk);
      }
    }
  }
}
