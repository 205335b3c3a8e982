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
  /** Scheduled episodes in flight and queued, while a run goes. */
  inFlight: number;
  /** How the last run ended, once one has. */
  lastRun: { reason: "done" | "interrupted" | "failed"; step: number; error?: string } | null;
  /** Why the last start failed, when it did. */
  error: string | null;
}
