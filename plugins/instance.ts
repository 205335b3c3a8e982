import type { HostRequest } from "../sdk/env/index.ts";
import type { Outcome } from "./runtime.ts";

export type HostOp = HostRequest["op"];

/**
 * One running sandbox instance, as a driver hands it to the supervisor. `call` resolves with the
 * plugin's raw result (envelope checked) or a failure; it never throws.
 */
export interface Instance {
  readonly alive: boolean;
  call(op: HostOp, params: unknown, timeoutMs: number): Promise<Outcome<unknown>>;
  /**
   * Confirms the instance can serve an episode (the supervisor asks before every handout of an idle
   * one): it answers a `ping`, and whatever the sandbox can tell directly (a docker container's state).
   */
  probe(timeoutMs: number): Promise<Outcome<unknown>>;
  dispose(): Promise<void>;
}

/** Starts instances of one plugin in one kind of sandbox. */
export interface Driver {
  start(): Promise<Outcome<Instance>>;
  close(): Promise<void>;
}
