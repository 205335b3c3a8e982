import type { Task } from "../../sdk/env/index.ts";
import type { ClientLink } from "./client-link.ts";
import type { Deque } from "./deque.ts";
import type { MixLedger } from "./mixing.ts";
import type { AbortReason } from "./port.ts";
import type { Seats } from "./resolve-seats.ts";
import type { TaskStream, TaskStreamPosition } from "./task-stream.ts";
import type { EpisodeResult, EvalReport, SchedulerEnvironment } from "./types.ts";

/**
 * What the scheduler's parts share: one lane per environment (its task stream, its queue of slots and
 * the clients that can run it), the groups and batches the planner makes, evaluation runs, and the slot,
 * one episode to play (retried under a fresh episode id until it has a result or its retries run out).
 */
export interface EnvLane {
  index: number;
  config: SchedulerEnvironment;
  stream: TaskStream;
  queue: Deque<Slot>;
  clients: Set<ClientState>;
}

export interface Group {
  id: string;
  env: EnvLane;
  task: Task;
  batch: Batch;
  slots: Slot[];
  status: "running" | "complete" | "failed";
  failures: AbortReason[];
}

export interface Batch {
  index: number;
  /** The step whose mixing weights gave its quotas. */
  mixStep: number;
  quotas: number[];
  groups: Group[];
  replacements: number;
  /** A slot of it has been dispatched (deterministic mode starts one batch at a time). */
  started: boolean;
  /** Stream positions and ledger before this batch was planned (for `snapshot`). */
  before: { streams: TaskStreamPosition[]; ledger: MixLedger };
}

export interface EvalRun {
  id: number;
  step: number;
  split: string;
  envs: EnvLane[];
  slots: Slot[];
  pending: number;
  resolve: (report: EvalReport) => void;
}

export interface Slot {
  id: string;
  env: EnvLane;
  task: Task;
  /** Who plays each seat of this task. */
  seats: Seats;
  seed: number;
  purpose: "train" | "eval";
  group: Group | null;
  evalRun: EvalRun | null;
  /** Failed tries so far. */
  attempt: number;
  /** Registrations so far: each gets a fresh episode id, so a stale result can never match. */
  tries: number;
  episodeId: string | null;
  /** judging: ended on its client, its claim still open, waiting for its group's group scorer. */
  state: "queued" | "starting" | "running" | "judging" | "done" | "failed";
  client: ClientState | null;
  failures: AbortReason[];
  result: EpisodeResult | null;
}

export interface ClientState {
  id: string;
  link: ClientLink | null;
  envs: EnvLane[];
  concurrency: number;
  slots: Set<Slot>;
  lastSeen: number;
  disconnectedAt: number | null;
}

/** Makes slots: resolves the task's seats and derives the episode seed from the slot id. */
export type NewSlot = (id: string, env: EnvLane, task: Task, purpose: "train" | "eval", group: Group | null, evalRun: EvalRun | null) => Slot;

