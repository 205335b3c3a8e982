export { Scheduler, type ClientLink, type SchedulerOptions } from "./scheduler.ts";
export { registryFromEpisodeStore } from "./episode-store-registry.ts";
export { acceptsDevVersions, schedulerOptionsFromRunConfig, type ResolvedEnvironment } from "./from-run-config.ts";
export { describeMismatch, type EnvMatch, matchEnvironment, offersEnvironment } from "./match-environments.ts";
export type { AbortKind, AbortReason, AgentTarget, ClaimOutcome, EpisodeRegistration, EpisodeRegistry, LoadTasks, RegistryEvent } from "./port.ts";
export { SchedulerStateSchema, type SchedulerState } from "./state.ts";
export { allZeroStep, apportion, planQuotas, sharesAt, weightAt, type MixLedger, type Weight, type WeightSchedule } from "./mixing.ts";
export { TaskStream, type TaskStreamPosition } from "./task-stream.ts";
export type {
  BatchReport,
  EpisodeResult,
  EvalEnvReport,
  EvalReport,
  EvalRequest,
  GroupReport,
  GroupScorer,
  SchedulerEnvironment,
  SchedulerEvent,
  SchedulerStats,
  WaitingEnvironment,
} from "./types.ts";
export { BadStateError, NoTasksError, NoWeightError, SchedulerError, UnknownRoleTargetError, UnmappedRoleError } from "./errors.ts";
