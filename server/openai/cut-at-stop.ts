/**
 * Where a generation first contains one of the stop strings: the number of ids to keep (up to and
 * including the id that completes the stop) and the text before the stop. Null when no stop occurs.
 */
export function cutAtStop(
  ids: readonly number[],
  decode: (ids: readonly number[]) => string,
  stops: readonly string[],
): { keep: number; text: string } | null {
  const live = stops.filter((s) => s.length > 0);
  if (live.length === 0) return null;
  const firstStop = (text: string): number => {
    let best = -1;
    for (const s of live) {
      const at = text.indexOf(s);
      if (at !== -1 && (best === -1 || at < best)) best = at;
    }
    return best;
  };
  if (firstStop(decode(ids)) === -1) return null;
  // Containing a stop is monotone in the prefix length, so the shortest such prefix is a binary search.
  let lo = 1;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (firstStop(decode(ids.slice(0, mid))) !== -1) hi = mid;
    else lo = mid + 1;
  }
  const text = decode(ids.slice(0, lo));
  return { keep: lo, text: text.slice(0, firstStop(text)) };
}
