import type { z } from "zod";
import { HttpError } from "./errors.ts";

/** Validates a request body; a ZodError becomes the cause of a coded 400 naming the offending field. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0] && explainUnion(r.error.issues[0]);
  const param = issue && issue.path.length > 0 ? issue.path.map(String).join(".") : null;
  const message = issue ? `${param ?? "body"}: ${issue.message}` : "invalid request body";
  return throwBadRequest(message, param, r.error);
}

function throwBadRequest(message: string, param: string | null, cause: unknown): never {
  throw new HttpError(400, "AJ_ERR_INVALID_REQUEST", message, { param, cause });
}

type Issue = z.core.$ZodIssue;

/**
 * A union's failure as the alternative that got furthest says it (zod says only "Invalid input"): the one
 * whose first issue lies deepest, or, at the same depth, the one whose type matched (`stop` with five
 * strings: "Too big: expected array to have <=4 items"). When no alternative's type matched, the types
 * it takes are named.
 */
function explainUnion(issue: Issue): { path: PropertyKey[]; message: string } {
  // a union given its own message (`{ error }`) says that
  if (issue.code !== "invalid_union" || issue.message !== "Invalid input" || issue.errors.length === 0 || issue.errors.some((e) => e.length === 0)) return issue;
  const firsts = issue.errors.map((e) => e[0]!);
  const typeMiss = (i: Issue) => i.code === "invalid_type" && i.path.length === 0;
  if (firsts.every(typeMiss)) {
    const expected = [...new Set(firsts.map((i) => (i.code === "invalid_type" ? i.expected : "")))].join(" or ");
    return { path: issue.path, message: `Invalid input: expected ${expected}` };
  }
  const best = firsts.reduce((a, b) => (b.path.length > a.path.length || (b.path.length === a.path.length && typeMiss(a) && !typeMiss(b)) ? b : a));
  const inner = explainUnion(best);
  return { path: [...issue.path, ...inner.path], message: inner.message };
}
