import { z } from "zod";

/**
 * The one vocabulary of why an episode attempt ended without a reward, with the cause that really
 * happened. Every kind is an infrastructure failure: the attempt is masked out and retried, never
 * scored. Environment sandboxes (plugins/), swarm clients, the scheduler, the server's episode store and
 * the report all speak it. A leaf module (zod only), so that every folder may import it.
 */
export const FAILURE_KINDS = {
  crash: "the environment threw, exited or was killed",
  timeout: "an environment call ran past its time limit (the manifest's limits.callTimeoutMs)",
  oom: "the environment ran past its memory limit",
  protocol: "a reply or a result broke the protocol: not a Turn, or rewards missing, not finite or outside the declared range",
  "start-failed": "an environment instance could not start",
  workflow: "the client's agent loop threw, or returned without ending the episode",
  "client-lost": "the client disconnected, restarted without the episode, or stopped heart-beating past its lease",
  reclaimed: "the server reclaimed the claim: no chat call or heartbeat for server.idleTimeoutS",
  abandoned: "the server gave the episode up when a weight update's drain timed out",
  "group-failed": "cancelled: another episode of its group failed for good",
  cancelled: "cancelled by the scheduler before it ran (claims paused, the scheduler closing)",
  "server-restart": "the server restarted while the episode was open",
  "reward-model": "a reward model or LLM judge could not score the episode (an error, a timeout, or no valid verdict after its retries)",
} as const satisfies Record<string, string>;

export type FailureKind = keyof typeof FAILURE_KINDS;

export const FailureKindSchema = z.enum(Object.keys(FAILURE_KINDS) as [FailureKind, ...FailureKind[]]);

/** The kinds an environment sandbox reports (plugins/): the episode's instance failed. */
export const ENVIRONMENT_FAILURE_KINDS = ["crash", "timeout", "oom", "protocol", "start-failed"] as const satisfies readonly FailureKind[];
export type EnvironmentFailureKind = (typeof ENVIRONMENT_FAILURE_KINDS)[number];

export function isFailureKind(kind: string): kind is FailureKind {
  return Object.hasOwn(FAILURE_KINDS, kind);
}
