import type { Task } from "../../sdk/env/index.ts";
import type { LoadTasks } from "./port.ts";
import type { EnvLane, EvalRun, NewSlot, Slot } from "./slots.ts";
import type { EvalEnvReport, EvalReport, EvalRequest } from "./types.ts";

/** What evaluation runs call out to, and where they start. */
export interface EvaluationRunsDeps {
  loadTasks: LoadTasks;
  /** Throws when a task's seats do not resolve (checked when the split is first loaded). */
  checkSeats: (lane: EnvLane, task: Task) => void;
  newSlot: NewSlot;
  defaults: { split: string; tasks: number };
  /** Runs started before (resumed state). */
  runs: number;
}

/**
 * Evaluation runs beside training: one slot per task of the split's first N tasks, never in a batch.
 * A run resolves with per-environment rewards once each of its slots has a result or has failed.
 */
export class EvaluationRuns {
  readonly #lanes: readonly EnvLane[];
  readonly #deps: EvaluationRunsDeps;
  readonly #tasks = new Map<string, Task[]>();
  #runs: number;

  constructor(lanes: readonly EnvLane[], deps: EvaluationRunsDeps) {
    this.#lanes = lanes;
    this.#deps = deps;
    this.#runs = deps.runs;
  }

  /** How many runs have started (part of the resumable state). */
  started(): number {
    return this.#runs;
  }

  /** Queues a run's slots; `onQueued` fires once they are in their lanes. */
  async start(request: EvalRequest, step: number, onQueued: () => void): Promise<EvalReport> {
    const split = request.split ?? this.#deps.defaults.split;
    const count = request.tasks ?? this.#deps.defaults.tasks;
    const lanes = this.#lanes.filter((e) => !request.envs || request.envs.includes(e.config.name));
    const lists = await Promise.all(lanes.map((e) => this.#tasksOf(e, split)));
    const id = this.#runs++;
    return new Promise<EvalReport>((resolve) => {
      const run: EvalRun = { id, step, split, envs: lanes, slots: [], pending: 0, resolve };
      lanes.forEach((env, i) => {
        for (const task of lists[i]!.slice(0, count)) {
          const slot = this.#deps.newSlot(`v${id}-${env.config.name}-${task.id}`, env, task, "eval", null, run);
          run.slots.push(slot);
          env.queue.push(slot);
        }
      });
      run.pending = run.slots.length;
      if (run.pending === 0) resolve(report(run));
      else onQueued();
    });
  }

  /** An evaluation slot reached done or failed; returns its run's report when it was the last. */
  settle(slot: Slot): EvalReport | null {
    const run = slot.evalRun!;
    run.pending -= 1;
    if (run.pending > 0) return null;
    const r = report(run);
    run.resolve(r);
    return r;
  }

  async #tasksOf(lane: EnvLane, split: string): Promise<Task[]> {
    const key = `${lane.config.name}\u0000${split}`;
    let list = this.#tasks.get(key);
    if (!list) {
      list = await this.#deps.loadTasks(lane.config.name, split);
      for (const task of list) this.#deps.checkSeats(lane, task);
      this.#tasks.set(key, list);
    }
    return list;
  }
}

function report(run: EvalRun): EvalReport {
  const perEnv: Record<string, EvalEnvReport> = {};
  for (const env of run.envs) {
    const slots = run.slots.filter((s) => s.env === env);
    const done = slots.filter((s) => s.result);
    const means = done.map((s) => {
      const trained = s.seats.agents.filter((a) => a.target.kind === "policy").map((a) => a.agentId);
      const ids = trained.length > 0 ? trained : Object.keys(s.result!.rewards);
      const rs = ids.map((id) => s.result!.rewards[id] ?? 0);
      return rs.length ? rs.reduce((a, b) => a + b, 0) / rs.length : 0;
    });
    perEnv[env.config.name] = {
      episodes: done.length,
      failed: slots.length - done.length,
      meanReward: means.length ? means.reduce((a, b) => a + b, 0) / means.length : Number.NaN,
      rewards: done.map((s) => ({ taskId: s.task.id, rewards: s.result!.rewards })),
      scores: means,
    };
  }
  return { id: run.id, step: run.step, split: run.split, perEnv };
}
