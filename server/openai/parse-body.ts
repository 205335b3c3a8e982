import type { z } from "zod";
import { HttpError } from "./errors.ts";

/** Validates a request body; a ZodError becomes the cause of a coded 400 naming the offending field. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const param = issue && issue.path.length > 0 ? issue.path.map(String).join(".") : null;
  const message = issue ? `${param ?? "body"}: ${issue.message}` : "invalid request body";
  return throwBadRequest(message, param, r.error);
}

function throwBadRequest(message: string, param: string | null, cause: unknown): never {
  throw new HttpError(400, "AJ_ERR_INVALID_REQUEST", message, { param, cause });
}
