import type { GenerateTasksRequest, Manifest, ResetRequest, SolveRequest, StepRequest, Task, Turn } from "../sdk/env/index.ts";
import type { EnvironmentFailureKind } from "../sdk/failure-kinds.ts";

/**
 * Why an environment instance failed (the sandbox's part of `sdk/failure-kinds.ts`). An infrastructure
 * failure: the episode is retried, never scored.
 */
export type FailureKind = EnvironmentFailureKind;

export interface Failure {
  kind: FailureKind;
  message: string;
}

/** Expected outcomes are values, not throws. */
export type Outcome<T> = { kind: "ok"; value: T } | { kind: "failed"; failure: Failure };

/** One episode's use of a supervised instance. `close` hands the instance back (or retires it). */
export interface EpisodeSession {
  reset(input: ResetRequest): Promise<Outcome<Turn>>;
  step(input: StepRequest): Promise<Outcome<Turn>>;
  close(): Promise<void>;
}

/** A running environment: a supervised pool of instances of one plugin, in its sandbox. */
export interface EnvironmentRuntime {
  readonly manifest: Manifest;
  openEpisode(): Promise<Outcome<EpisodeSession>>;
  /** Tasks of a split: read from the plugin's files, or generated (`{ generate: N }`) in the sandbox. */
  listTasks(split: string, options?: { seed?: number }): Promise<Task[]>;
  generateTasks(input: GenerateTasksRequest): Promise<Outcome<Task[]>>;
  solve(input: SolveRequest): Promise<Outcome<string>>;
  stats(): RuntimeStats;
  close(): Promise<void>;
}

export interface RuntimeStats {
  live: number;
  idle: number;
  /** Episodes waiting for an instance because `maxInstances` are live. */
  waiting: number;
  started: number;
  replaced: number;
  failures: Record<FailureKind, number>;
}

export interface OpenEnvironmentOptions {
  /** The plugin folder (holds agentjet.env.json). */
  dir: string;
  manifest: Manifest;
  /** vm: a prebuilt bundle (made at install time); bundled from `entry` on open when absent. */
  bundlePath?: string;
  /** docker: a local image tag; built from the plugin's Dockerfile when absent. */
  image?: string;
  /** docker: host folders for the manifest's named mounts. */
  mounts?: Record<string, string>;
  /** Most instances alive at once (default: 4). */
  maxInstances?: number;
  /** Instances kept started and idle, ready for the next episode (default: 1). */
  warm?: number;
  /** The installed store's data folder: `{ file }` splits are looked up here first, `{ external }` splits resolve here. */
  dataDir?: string;
  /** Most instance starts in flight at once (default: 2). */
  maxConcurrentStarts?: number;
  /**
   * Episodes one instance serves at once (default: 1). Above 1 (and with `manifest.reusable`), the
   * calls of an instance's episodes travel together as one `batch` message: fewer round trips for short
   * episodes. `maxInstances` then counts episodes; a crash, timeout or OOM fails all of an instance's episodes.
   */
  episodesPerInstance?: number;
  /** How often idle instances are pinged, ms (default: 5000). */
  healthIntervalMs?: number;
  /**
   * docker: the OCI runtime containers run under: "runc" (Docker's default) or "runsc" (gVisor, a
   * user-space kernel between untrusted plugin code and the host; it must be registered with the engine).
   * Default: `AGENTJET_CONTAINER_RUNTIME`, else "runc".
   */
  containerRuntime?: ContainerRuntime;
}

/** The OCI runtimes a docker plugin may run under. */
export const CONTAINER_RUNTIMES = ["runc", "runsc"] as const;
export type ContainerRuntime = (typeof CONTAINER_RUNTIMES)[number];
