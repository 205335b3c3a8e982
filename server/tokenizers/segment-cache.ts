/**
 * A rendered message as a cache key: its form with the long texts left out (`key` holds `longTextKey` of each),
 * and those texts (`long`), compared one by one on a hit. A huge message is never concatenated into a
 * key (that copy, and comparing two such copies, held the event loop for milliseconds).
 */
export interface SegmentKey {
  key: string;
  long: readonly string[];
}

/** Characters of a long text hashed into its key: this many spread evenly over it, and its last `TAIL`. */
const SAMPLES = 64;
const TAIL = 32;

/**
 * A long text's stand-in in a key: its length and an FNV-1a hash of characters sampled across it and of
 * its last ones. Texts of one length that differ where it looks get different keys, so a lookup compares
 * a long text in full only with one that is most likely equal: each full compare of a 4 MB message with
 * another of its length held the event loop about a millisecond, one per cached entry of that length.
 */
export function longTextKey(text: string): string {
  const n = text.length;
  let h = 0x811c9dc5;
  for (let i = 0; i < SAMPLES; i++) {
    h ^= n === 0 ? 0 : text.charCodeAt(Math.floor((i * (n - 1)) / (SAMPLES - 1)));
    h = Math.imul(h, 0x01000193);
  }
  for (let i = Math.max(0, n - TAIL); i < n; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return `${n}:${(h >>> 0).toString(36)}`;
}

const sameTexts = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((s, i) => s === b[i]);

/** Entries that share a `key` (long texts of the same lengths) at most. */
const PER_KEY = 8;

/**
 * Token ids of rendered messages by their rendered form, least recently used first out. An episode's
 * call k repeats calls 1..k-1's messages, so with this cache it tokenizes only what is new.
 */
export class SegmentCache<V> {
  private readonly map = new Map<string, Array<{ long: readonly string[]; value: V }>>();
  constructor(private readonly capacity: number) {}

  peek(k: SegmentKey): V | undefined {
    return this.map.get(k.key)?.find((e) => sameTexts(e.long, k.long))?.value;
  }

  /** `peek`, marking the entry found as used. */
  find(k: SegmentKey): V | undefined {
    const entries = this.map.get(k.key);
    const hit = entries?.find((e) => sameTexts(e.long, k.long));
    if (hit === undefined) return undefined;
    this.map.delete(k.key);
    this.map.set(k.key, entries!);
    return hit.value;
  }

  /**
   * Adds an entry without looking for an equal one first (the caller found none a moment ago): comparing
   * a huge message with each cached one of its length again held the event loop. Should an equal entry
   * have been added meanwhile, the two stand side by side until one ages out.
   */
  add(k: SegmentKey, value: V): void {
    const entries = this.map.get(k.key) ?? [];
    entries.push({ long: k.long, value });
    if (entries.length > PER_KEY) entries.shift();
    this.map.delete(k.key);
    this.map.set(k.key, entries);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value!);
  }

  put(k: SegmentKey, value: V): void {
    const entries = (this.map.get(k.key) ?? []).filter((e) => !sameTexts(e.long, k.long));
    entries.push({ long: k.long, value });
    if (entries.length > PER_KEY) entries.shift();
    this.map.delete(k.key);
    this.map.set(k.key, entries);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value!);
  }

  get(k: SegmentKey, make: () => V): V {
    const entries = this.map.get(k.key);
    const hit = entries?.find((e) => sameTexts(e.long, k.long));
    if (hit === undefined) {
      const value = make();
      this.put(k, value);
      return value;
    }
    this.map.delete(k.key);
    this.map.set(k.key, entries!);
    return hit.value;
  }
}
