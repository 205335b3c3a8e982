import { HttpError } from "./errors.ts";
import { MAX_BODY_DEPTH, nestedDeeperThan } from "./nesting-depth.ts";

/** Refuses a value nested deeper than `limit` arrays/objects. */
export function checkDepth(value: unknown, param: string, limit = MAX_BODY_DEPTH): void {
  if (nestedDeeperThan(value, limit)) throw new HttpError(400, "AJ_ERR_INVALID_REQUEST", `${param}: nested deeper than ${limit} levels`, { param });
}
