export type { BatchSelection, ClientsView, StrategyName, StrategyOptions } from "./batching-strategies.ts";
export { selectBatch } from "./batching-strategies.ts";
export { ClientActivity } from "./client-activity.ts";
export type { AdvantageOptions } from "./compute-advantages.ts";
export { computeAdvantages, computeMeanStd } from "./compute-advantages.ts";
export type {
  CoordinatorCounters,
  CoordinatorOptions,
  CoordinatorPhase,
  StepReport,
  TrainingConfig,
} from "./coordinator.ts";
export { TrainingCoordinator, buildTrainBatch } from "./coordinator.ts";
export type { EpisodeSamples, EpisodeUnit } from "./episode-samples.ts";
export { buildEpisodeSamples } from "./episode-samples.ts";
export { PoolCorruptError } from "./errors.ts";
export type { DroppedGroup, FilterResult } from "./filter-groups.ts";
export { filterEqualRewardGroups } from "./filter-groups.ts";
export type { MergedTimeline, MergeOptions, MergeResult, MergeStats } from "./merge-timelines.ts";
export { mergeEpisodeCalls, mergeTimelines } from "./merge-timelines.ts";
export type { EndedEpisode, EpisodeOutcome, EpisodeStorePort, TrainerPort } from "./ports.ts";
export type { PackableSequence, PrefixSavings, PrefixTree, TreePack, TrieBudget } from "./prefix-tree.ts";
export { buildPrefixTree, chainCost, computeDepths, measurePackSavings, measurePrefixSavings, packPrefixTrees, readTreePath } from "./prefix-tree.ts";
export type { Sample, TrainBatch, TrainMetrics, TrainSample } from "./sample.ts";
export type { PoolEntry } from "./sample-pool.ts";
export { SamplePool } from "./sample-pool.ts";
export { selectTrainingConfig } from "./training-config.ts";
