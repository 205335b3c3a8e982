import type { RunConfig } from "../config/run-config.ts";
import type { TrainingConfig } from "./coordinator.ts";

/** The coordinator's part of a parsed run config. */
export function selectTrainingConfig(config: RunConfig): TrainingConfig {
  return {
    batching: { ...config.batching, order: config.run.deterministic ? "planned" : "arrival" },
    merging: config.merging,
    advantage: config.advantage,
    syncTimeoutS: config.server.syncTimeoutS,
  };
}
