import type { EnvironmentEntry, RunConfig } from "../../server/config/index.ts";
import type { EpisodeRegistry, LoadTasks } from "./port.ts";
import type { SchedulerOptions } from "./scheduler.ts";
import type { SchedulerStateInput } from "./state.ts";

/** What the run config does not say: each environment's resolved version, hash and seats. */
export interface ResolvedEnvironment {
  version: string;
  /** Require clients to announce this content hash; absent: name@version is enough (local plugins being edited). */
  hash?: string;
  agents: ReadonlyArray<{ id: string; role: string }>;
}

/** Scheduler options from a validated run config (`agentjet train` / `serve`). */
export function schedulerOptionsFromRunConfig(
  config: RunConfig,
  deps: {
    resolve: (name: string, version: string | undefined) => ResolvedEnvironment;
    loadTasks: LoadTasks;
    registry: EpisodeRegistry;
    baseUrl: string | (() => string);
    state?: SchedulerStateInput;
    leaseMs?: number;
  },
): SchedulerOptions {
  return {
    environments: config.environments.map((e) => {
      const r = deps.resolve(e.name, e.version);
      return {
        name: e.name,
        version: r.version,
        ...(r.hash !== undefined ? { hash: r.hash } : {}),
        acceptDev: acceptsDevVersions(e),
        weight: e.weight,
        split: e.split,
        agents: r.agents,
        roles: e.roles,
        maxTurns: e.maxTurns,
      };
    }),
    policies: Object.keys(config.policies),
    frozen: Object.keys(config.frozen),
    loadTasks: deps.loadTasks,
    registry: deps.registry,
    baseUrl: deps.baseUrl,
    batchTasks: config.batching.batchTasks,
    groupSize: config.batching.groupSize,
    infraRetries: config.batching.infraRetries,
    seed: config.run.seed,
    maxBatches: config.run.steps,
    leaseMs: deps.leaseMs ?? config.server.idleTimeoutS * 1000,
    ...(config.eval.every > 0 ? { eval: config.eval } : {}),
    ...(deps.state !== undefined ? { state: deps.state } : {}),
  };
}

/** Whether a run environment accepts development versions: `allowDev`, else on exactly when it trains from a local `path`. */
export function acceptsDevVersions(entry: Pick<EnvironmentEntry, "allowDev" | "path">): boolean {
  return entry.allowDev ?? entry.path !== undefined;
}
