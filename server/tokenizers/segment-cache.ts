/**
 * Token ids of rendered messages by their rendered form, least recently used first out. An episode's
 * call k repeats calls 1..k-1's messages, so with this cache it tokenizes only what is new.
 */
export class SegmentCache<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly capacity: number) {}

  peek(key: string): V | undefined {
    return this.map.get(key);
  }

  put(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value!);
  }

  get(key: string, make: () => V): V {
    const hit = this.map.get(key);
    if (hit !== undefined) {
      this.map.delete(key);
      this.map.set(key, hit);
      return hit;
    }
    const value = make();
    this.map.set(key, value);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value!);
    return value;
  }
}
