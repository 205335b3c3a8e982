import { AgentJetError } from "../errors/index.ts";

/** The base of every coded server error. `code` is stable (`AJ_ERR_...`, registered in errors/codes.json); tests assert on it. */
export class AgentJetServerError extends AgentJetError {}

/** A failed fetch's message with its network cause ("fetch failed" alone does not say that nothing listens there). */
export function describeFetchFailure(cause: unknown): string {
  const message = (cause as Error).message;
  const inner = (cause as { cause?: { code?: unknown; message?: unknown } }).cause;
  const detail = typeof inner?.code === "string" ? inner.code : typeof inner?.message === "string" ? inner.message : undefined;
  return detail && !message.includes(detail) ? `${message} (${detail})` : message;
}
