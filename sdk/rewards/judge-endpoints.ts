import type { RewardModels } from "./spec.ts";

/**
 * The judges of `spec` that have no endpoint (no `baseUrl`, and no `$AGENTJET_JUDGE_BASE_URL` in `env`), of
 * the given scope: `episode` judges run on the clients, `group` judges on the server. Each would fail every
 * episode it scores, retried for ever: a start checks them first.
 */
export function judgesWithoutEndpoint(spec: RewardModels | undefined, scope: "episode" | "group", env: Readonly<Record<string, string | undefined>> = process.env): string[] {
  if (!spec || env.AGENTJET_JUDGE_BASE_URL) return [];
  return spec.parts.flatMap((p) => (p.kind === "judge" && p.scope === scope && p.baseUrl === undefined ? [p.name] : []));
}
