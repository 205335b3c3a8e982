/** Deepest nesting a request body may have (a tool schema or metadata 10,000 levels deep is a 400, not a stack overflow later). */
export const MAX_BODY_DEPTH = 64;

/**
 * Whether `value` nests arrays/objects deeper than `limit`; iterative, so any depth is safe to check. It
 * imports nothing, so the JSON body thread bundles it alone.
 */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<{ v: unknown; d: number }> = [{ v: value, d: 0 }];
  while (stack.length > 0) {
    const { v, d } = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (d >= limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (typeof child === "object" && child !== null) stack.push({ v: child, d: d + 1 });
  }
  return false;
}
