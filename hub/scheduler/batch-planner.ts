import { type MixLedger, planQuotas, sharesAt } from "./mixing.ts";
import type { Batch, EnvLane, Group, NewSlot, Slot } from "./slots.ts";
import type { SchedulerState, SchedulerStateInput } from "./state.ts";
import type { AbortReason } from "./port.ts";
import type { BatchReport, Counters, GroupReport } from "./types.ts";

/** A group that failed for good, as the planner reports it. */
export interface FailedGroup {
  env: string;
  groupId: string;
  taskId: string;
  /** Its members that had ended (their results are not trained). */
  episodeIds: string[];
  failures: AbortReason[];
}

export interface BatchPlannerOptions {
  batchTasks: number;
  groupSize: number;
  /** Batches planned ahead, counting the oldest unfinished one. */
  lookahead: number;
  maxBatches?: number;
  replaceFailedGroups: boolean;
  state?: SchedulerStateInput;
  /** The step a new batch's mixing weights are read at, given the unfinished batches planned before it; default its index. */
  mixStep?: (ahead: number) => number;
}

/** What the planner calls out to: slots, the counters, and the scheduler's handlers. */
export interface BatchPlannerDeps {
  newSlot: NewSlot;
  counters: Counters;
  /** Stops a group member that is still running (its group failed). */
  cancel: (slot: Slot, reason: string) => void;
  /** A batch finished (all its groups complete or failed). */
  onBatch: (report: BatchReport) => void;
  /** A group failed for good. */
  onGroupFailed: (failed: FailedGroup) => void;
}

/**
 * Batch planning: the quotas of each batch (largest remainder over each environment's running deficit),
 * one group of `groupSize` slots per planned task, a failed group replaced by another task of the same
 * environment, and finished batches reported in step order. It holds the resumable part of the state.
 */
export class BatchPlanner {
  readonly #o: BatchPlannerOptions;
  readonly #lanes: readonly EnvLane[];
  readonly #deps: BatchPlannerDeps;
  readonly #batches: Batch[] = [];
  /** Groups of the resumed batches that had completed before the interruption: planned as complete. */
  readonly #resumedDone: ReadonlySet<string>;
  #ledger: MixLedger;
  #nextBatch: number;
  /** Mix steps of the batches a resumed run re-plans, from its first index on. */
  readonly #resumedMix: { from: number; steps: readonly number[] | null };

  constructor(options: BatchPlannerOptions, lanes: readonly EnvLane[], deps: BatchPlannerDeps) {
    this.#o = options;
    this.#lanes = lanes;
    this.#deps = deps;
    const state = options.state;
    this.#ledger = {
      target: lanes.map((e) => state?.ledger[e.config.name]?.target ?? 0),
      given: lanes.map((e) => state?.ledger[e.config.name]?.given ?? 0),
    };
    this.#nextBatch = state?.nextBatch ?? 0;
    this.#resumedMix = { from: this.#nextBatch, steps: state ? (state.mixSteps ?? null) : [] };
    this.#resumedDone = new Set(state?.doneGroups ?? []);
  }

  /** Plans batches until `lookahead` are open (or `maxBatches` are planned). */
  plan(closed: boolean): void {
    while (!closed && this.#batches.length < this.#o.lookahead && (this.#o.maxBatches === undefined || this.#nextBatch < this.#o.maxBatches)) {
      this.#planBatch();
    }
  }

  /** A training slot reached done or failed: settles its group and reports finished batches. */
  settle(slot: Slot): void {
    const group = slot.group!;
    if (group.status !== "running") return;
    if (slot.state === "failed") {
      group.status = "failed";
      group.failures = slot.failures;
      this.#deps.counters.failedGroups += 1;
      for (const other of group.slots) {
        if (other === slot) continue;
        if (other.state === "running" || other.state === "starting" || other.state === "judging") this.#deps.cancel(other, "its group failed");
        if (other.state !== "done") other.state = "failed";
      }
      this.#deps.onGroupFailed({
        env: group.env.config.name,
        groupId: group.id,
        taskId: group.task.id,
        episodeIds: group.slots.flatMap((s) => (s.result ? [s.result.episodeId] : [])),
        failures: group.failures,
      });
      const batch = group.batch;
      if (this.#o.replaceFailedGroups && batch.replacements < this.#o.batchTasks) {
        batch.replacements += 1;
        this.#addGroup(batch, group.env);
      }
    } else if (group.slots.every((s) => s.state === "done")) {
      group.status = "complete";
    }
    this.#finishBatches();
  }

  /** True while a batch that has started (a slot of it was dispatched) has groups still running. */
  inProgress(): boolean {
    return this.#batches.some((b) => b.started);
  }

  /** Planning from the oldest unfinished batch, with which of its groups completed. */
  snapshot(evalRuns: number): SchedulerState {
    const oldest = this.#batches[0];
    const streams = oldest ? oldest.before.streams : this.#lanes.map((e) => e.stream.position());
    const ledger = oldest ? oldest.before.ledger : this.#ledger;
    return {
      version: 1,
      nextBatch: oldest ? oldest.index : this.#nextBatch,
      mixSteps: this.#batches.map((b) => b.mixStep),
      streams: Object.fromEntries(this.#lanes.map((e, i) => [e.config.name, streams[i]!])),
      ledger: Object.fromEntries(this.#lanes.map((e, i) => [e.config.name, { target: ledger.target[i]!, given: ledger.given[i]! }])),
      evalRuns,
      doneGroups: this.#batches.flatMap((b) => b.groups.filter((g) => g.status === "complete").map((g) => g.id)),
      partialEpisodes: this.#batches.flatMap((b) =>
        b.groups.filter((g) => g.status !== "complete").flatMap((g) => g.slots.flatMap((s) => (s.result ? [s.result.episodeId] : []))),
      ),
    };
  }

  #planBatch(): void {
    const index = this.#nextBatch++;
    const before = { streams: this.#lanes.map((e) => e.stream.position()), ledger: this.#ledger };
    const step = this.#mixStepOf(index);
    const shares = sharesAt(this.#lanes.map((e) => e.config.weight), step);
    const { quotas, ledger } = planQuotas(this.#ledger, shares, this.#o.batchTasks);
    this.#ledger = ledger;
    const batch: Batch = { index, mixStep: step, quotas, groups: [], replacements: 0, started: false, before };
    this.#batches.push(batch);
    this.#lanes.forEach((env, i) => {
      for (let k = 0; k < quotas[i]!; k++) this.#addGroup(batch, env, true);
    });
    if (batch.groups.every((g) => g.status !== "running")) this.#finishBatches();
  }

  /**
   * A re-planned batch keeps the step it was mixed at (its completed groups must name the same
   * environments); a snapshot without mix steps mixed its batches at their index, and so does a planner
   * without `mixStep`.
   */
  #mixStepOf(index: number): number {
    const { from, steps } = this.#resumedMix;
    if (steps === null && index < from + this.#o.lookahead) return index;
    const kept = steps?.[index - from];
    if (kept !== undefined) return kept;
    return this.#o.mixStep ? this.#o.mixStep(this.#batches.length) : index;
  }

  #addGroup(batch: Batch, env: EnvLane, planned = false): void {
    const task = env.stream.next();
    const g = batch.groups.length;
    const group: Group = { id: `${batch.index}:${g}`, env, task, batch, slots: [], status: "running", failures: [] };
    if (planned && this.#resumedDone.has(group.id)) {
      // Its episodes finished before the interruption and wait in the sample pool: not played again.
      group.status = "complete";
      batch.groups.push(group);
      return;
    }
    for (let m = 0; m < this.#o.groupSize; m++) {
      const slot = this.#deps.newSlot(`b${batch.index}-g${g}-m${m}`, env, task, "train", group, null);
      group.slots.push(slot);
      env.queue.push(slot);
    }
    batch.groups.push(group);
  }

  /** Reports finished batches in step order and drops them (memory stays flat). */
  #finishBatches(): void {
    while (this.#batches.length > 0 && this.#batches[0]!.groups.every((g) => g.status !== "running")) {
      const batch = this.#batches.shift()!;
      this.#deps.counters.batchesCompleted += 1;
      this.#deps.onBatch(this.#report(batch));
    }
  }

  #report(batch: Batch): BatchReport {
    const quotas: Record<string, number> = {};
    const filled: Record<string, number> = {};
    this.#lanes.forEach((e, i) => {
      quotas[e.config.name] = batch.quotas[i]!;
      filled[e.config.name] = 0;
    });
    const groups: GroupReport[] = batch.groups.map((g) => {
      if (g.status === "complete") filled[g.env.config.name]! += 1;
      return {
        groupId: g.id,
        env: g.env.config.name,
        taskId: g.task.id,
        status: g.status === "complete" ? "complete" : "failed",
        episodes: g.slots.flatMap((s) => (s.result ? [s.result] : [])),
        failures: g.failures,
      };
    });
    return { step: batch.index, quotas, filled, groups, failedGroups: groups.filter((g) => g.status === "failed").length };
  }
}
