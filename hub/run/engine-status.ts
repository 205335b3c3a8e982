import { HttpError } from "../../server/openai/index.ts";
import type { WaitingEnvironment } from "../scheduler/index.ts";

/** The engine's states (`GET /v1/engine/status`, and the service's logs). */
export type EngineState = "offline" | "booting" | "rolling" | "draining" | "syncing";

export interface EngineStatus {
  state: EngineState;
  /** Steps trained in this run (0 before the first). */
  step: number;
  /** Weight version per policy; empty while offline. */
  versions: Record<string, number>;
  /** Whether a run config is set (by `--config` or `POST /v1/engine/config`). */
  configured: boolean;
  /** How many times the engine has been started by this service. */
  starts: number;
  runDir: string | null;
  /** Clients connected to `/swarm`. */
  clients: string[];
  /** Scheduled episodes in flight (assigned to a client), while a run goes. */
  inFlight: number;
  /**
   * Environments whose scheduled episodes wait with no connected client able to run them (reported after
   * 10 s, once a client has connected): the batches that hold them cannot finish, so training waits. Each
   * says what it waits for and how to end the wait (start a client that offers that environment).
   */
  waiting: WaitingEnvironment[];
  /** How the last run ended, once one has. */
  lastRun: { reason: "done" | "interrupted" | "failed"; step: number; error?: string } | null;
  /** Why the last start failed, when it did. */
  error: string | null;
}

/** A 409 refusing what the engine's current state does not allow, with that state as `error.state` (clients branch on it, not on the words). */
export function engineStateError(state: EngineState, message: string): HttpError {
  return new HttpError(409, "AJ_ERR_ENGINE_STATE", message, { state });
}
