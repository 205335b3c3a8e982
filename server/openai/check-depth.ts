import { HttpError } from "./errors.ts";

/** Deepest nesting a request body may have (a tool schema or metadata 10,000 levels deep is a 400, not a stack overflow later). */
export const MAX_BODY_DEPTH = 64;

/** Refuses a value nested deeper than `limit` arrays/objects; iterative, so any depth is safe to check. */
export function checkDepth(value: unknown, param: string, limit = MAX_BODY_DEPTH): void {
  const stack: Array<{ v: unknown; d: number }> = [{ v: value, d: 0 }];
  while (stack.length > 0) {
    const { v, d } = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (d >= limit) throw new HttpError(400, "AJ_ERR_INVALID_REQUEST", `${param}: nested deeper than ${limit} levels`, { param });
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (typeof child === "object" && child !== null) stack.push({ v: child, d: d + 1 });
  }
}
