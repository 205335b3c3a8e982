export { type ActionPolicy, type EpisodeResult, playEpisode } from "./play-episode.ts";
export { type CheckResult, type CheckStatus, type ConformanceReport, runConformance, type RunConformanceOptions } from "./run-conformance.ts";
