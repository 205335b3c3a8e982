import type { Failure } from "./runtime.ts";

/**
 * Rewrites a limit failure so it says what to change: the limit that fired, its value, and the manifest
 * field that raises it. The sandbox's own words ("Isolate was disposed during execution", "Promise was
 * abandoned") stay in parentheses for a search.
 */
export function explainFailure(failure: Failure, op: string, limits: { callTimeoutMs: number; memoryMb: number }): Failure {
  if (failure.kind === "timeout") {
    return {
      kind: "timeout",
      message:
        `${op} did not finish within limits.callTimeoutMs (${limits.callTimeoutMs} ms): a loop that never ends, or a promise ` +
        `that never settles (${failure.message}). Fix the hang, or raise limits.callTimeoutMs in agentjet.env.json if the call is slow on purpose`,
    };
  }
  if (failure.kind === "oom") {
    return {
      kind: "oom",
      message: `${op} used more than limits.memoryMb (${limits.memoryMb} MiB) (${failure.message}). Use less memory, or raise limits.memoryMb in agentjet.env.json`,
    };
  }
  return failure;
}
