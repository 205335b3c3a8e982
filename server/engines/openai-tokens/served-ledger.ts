import type { TrainBatch } from "../../training/sample.ts";
import { UnservedTokensError } from "./errors.ts";

/**
 * A set of 64-bit keys (two 32-bit halves) in open-addressing typed arrays: it grows up to `maxSlots`,
 * then keeps two generations (the newest keys and the ones before), so memory stays bounded.
 */
class KeySet {
  private hi: Uint32Array;
  private lo: Uint32Array;
  private size = 0;
  private older: { hi: Uint32Array; lo: Uint32Array } | null = null;

  constructor(
    slots: number,
    private readonly maxSlots: number,
  ) {
    this.hi = new Uint32Array(slots);
    this.lo = new Uint32Array(slots);
  }

  add(h: number, l: number): void {
    if (this.probe(this.hi, this.lo, h, l) >= 0) return;
    if ((this.size + 1) * 2 > this.hi.length) this.makeRoom();
    const mask = this.hi.length - 1;
    let i = (h ^ Math.imul(l, 0x9e3779b1)) & mask;
    while (this.hi[i] !== 0 || this.lo[i] !== 0) i = (i + 1) & mask;
    this.hi[i] = h;
    this.lo[i] = l;
    this.size++;
  }

  has(h: number, l: number): boolean {
    return this.probe(this.hi, this.lo, h, l) >= 0 || (this.older !== null && this.probe(this.older.hi, this.older.lo, h, l) >= 0);
  }

  private probe(hi: Uint32Array, lo: Uint32Array, h: number, l: number): number {
    const mask = hi.length - 1;
    let i = (h ^ Math.imul(l, 0x9e3779b1)) & mask;
    while (hi[i] !== 0 || lo[i] !== 0) {
      if (hi[i] === h && lo[i] === l) return i;
      i = (i + 1) & mask;
    }
    return -1;
  }

  private makeRoom(): void {
    const { hi, lo } = this;
    if (hi.length < this.maxSlots) {
      this.hi = new Uint32Array(hi.length * 2);
      this.lo = new Uint32Array(hi.length * 2);
      this.size = 0;
      for (let i = 0; i < hi.length; i++) if (hi[i] !== 0 || lo[i] !== 0) this.add(hi[i]!, lo[i]!);
      return;
    }
    this.older = { hi, lo };
    this.hi = new Uint32Array(hi.length);
    this.lo = new Uint32Array(hi.length);
    this.size = 0;
  }
}

/** Two independent 32-bit hashes of the prefix ids[0..k), k = 1, 2, ...; (0, 0) is kept free as "empty". */
function forEachPrefixKey(ids: readonly number[], end: number, fn: (h: number, l: number, k: number) => void): void {
  let a = 0x811c9dc5;
  let b = 0x27d4eb2f;
  for (let k = 0; k < end; k++) {
    const v = ids[k]!;
    a = Math.imul(a ^ (v & 0xffff), 0x01000193);
    a = Math.imul(a ^ (v >>> 16), 0x01000193);
    b = Math.imul(b ^ v, 0x5bd1e995);
    b ^= b >>> 13;
    b = Math.imul(b, 0x85ebca6b);
    const h = (a ^ Math.imul(k + 1, 0x9e3779b1)) >>> 0;
    const l = (b ^ (b >>> 16)) >>> 0 || 1;
    fn(h, l, k + 1);
  }
}

function prefixKey(ids: readonly number[], end: number): [number, number] {
  let key: [number, number] = [0, 1];
  forEachPrefixKey(ids, end, (h, l) => {
    key = [h, l];
  });
  return key;
}

/**
 * Remembers what this engine served, so that a batch can only train served ids. A trained span (a
 * maximal run of loss mask 1) must be a prefix of one served output (the server may cut an output at a
 * stop string), optionally followed by one stop id (an end of turn appended after a cut output).
 * Every prefix of every output is kept as a 64-bit hash, in bounded memory (see KeySet).
 */
export class ServedLedger {
  private readonly prefixes: KeySet;
  private readonly stopIds = new Set<number>();

  /** `maxSlots` (a power of two) bounds memory at 16 bytes a slot; the window is maxSlots/2 to maxSlots tokens. */
  constructor(maxSlots = 1 << 22) {
    this.prefixes = new KeySet(Math.min(1 << 12, maxSlots), maxSlots);
  }

  record(outputIds: readonly number[], stopIds: readonly number[]): void {
    for (const id of stopIds) this.stopIds.add(id);
    forEachPrefixKey(outputIds, outputIds.length, (h, l) => this.prefixes.add(h, l));
  }

  private served(span: readonly number[], end: number): boolean {
    const [h, l] = prefixKey(span, end);
    return end > 0 && this.prefixes.has(h, l);
  }

  /** Throws `UnservedTokensError` at the first trained span that was not served. */
  verify(batch: TrainBatch): void {
    batch.samples.forEach((s, index) => {
      let i = 0;
      while (i < s.lossMask.length) {
        if (!s.lossMask[i]) {
          i++;
          continue;
        }
        let j = i;
        while (j < s.lossMask.length && s.lossMask[j]) j++;
        const span = s.tokenIds.slice(i, j);
        const ok = this.served(span, span.length) || (this.stopIds.has(span[span.length - 1]!) && this.served(span, span.length - 1));
        if (!ok) throw new UnservedTokensError(index, i);
        i = j;
      }
    });
  }
}
