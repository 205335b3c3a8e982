/**
 * A rendered message as a cache key: its form with the long texts left out (`key` holds their lengths),
 * and those texts (`long`), compared one by one on a hit. A huge message is never concatenated into a
 * key (that copy, and comparing two such copies, held the event loop for milliseconds).
 */
export interface SegmentKey {
  key: string;
  long: readonly string[];
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
