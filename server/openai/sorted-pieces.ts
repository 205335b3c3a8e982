/**
 * A tokenizer's pieces in sorted order, walked with a matcher's state shared along common prefixes: a
 * prefix no state takes rules out every piece that begins with it in one step. A token mask tries each
 * piece at each step; Qwen3 has 151,669, and inside a JSON literal almost all of them die at their first
 * character (`json-mask.ts`).
 */
export interface SortedPieces {
  /** Piece ids in sorted order of their text. */
  ids: Int32Array;
  /** `lcp[k]`: the UTF-16 units piece `ids[k]` shares with the one before it (never half a surrogate pair). */
  lcp: Int32Array;
}

/** The pieces `keep` keeps, sorted, with their common prefixes. */
export function sortPieces(pieces: readonly string[], keep: (piece: string, id: number) => boolean): SortedPieces {
  const kept: number[] = [];
  for (let id = 0; id < pieces.length; id++) if (keep(pieces[id]!, id)) kept.push(id);
  kept.sort((a, b) => (pieces[a]! < pieces[b]! ? -1 : pieces[a]! > pieces[b]! ? 1 : a - b));
  const lcp = new Int32Array(kept.length);
  for (let k = 1; k < kept.length; k++) {
    const a = pieces[kept[k - 1]!]!;
    const b = pieces[kept[k]!]!;
    let n = 0;
    while (n < a.length && n < b.length && a.charCodeAt(n) === b.charCodeAt(n)) n++;
    // a prefix that ends between the two halves of a surrogate pair shares no whole character there
    if (n > 0 && n < b.length && isHighSurrogate(b.charCodeAt(n - 1))) n--;
    lcp[k] = n;
  }
  return { ids: Int32Array.from(kept), lcp };
}

const isHighSurrogate = (u: number) => u >= 0xd800 && u < 0xdc00;

/**
 * Feeds every piece to a matcher a character (code point) at a time from `start`, sharing the work along
 * common prefixes: `stepChar` gives the state after a character, or null when nothing takes it (the
 * piece and all that share that prefix are out); `visit` gets each piece that was read whole, with its state.
 */
export function walkPieces<S>(pieces: readonly string[], sorted: SortedPieces, start: S, stepChar: (s: S, c: string) => S | null, visit: (id: number, s: S) => void): void {
  const depth: number[] = [0];
  const at: S[] = [start];
  // the end of the prefix that died last: pieces that share it are skipped
  let dead = Infinity;
  for (let k = 0; k < sorted.ids.length; k++) {
    const id = sorted.ids[k]!;
    const l = sorted.lcp[k]!;
    if (dead <= l) continue;
    dead = Infinity;
    while (depth[depth.length - 1]! > l) {
      depth.pop();
      at.pop();
    }
    const p = pieces[id]!;
    let d = depth[depth.length - 1]!;
    let s = at[at.length - 1] as S;
    let alive = true;
    while (d < p.length) {
      const w = p.codePointAt(d)! > 0xffff ? 2 : 1;
      const next = stepChar(s, p.slice(d, d + w));
      d += w;
      if (next === null) {
        alive = false;
        break;
      }
      depth.push(d);
      at.push(next);
      s = next;
    }
    if (!alive) {
      dead = d;
      continue;
    }
    visit(id, s);
  }
}
