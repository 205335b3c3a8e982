import type { Task } from "../../sdk/env/index.ts";
import { hashString, shuffleIndices } from "./rng.ts";

/** Where a task stream stands: serialisable, so `--resume` continues the same order. */
export interface TaskStreamPosition {
  epoch: number;
  position: number;
}

/**
 * Tasks of one environment drawn without replacement within each epoch, in an order fixed by the run
 * seed, the environment and the epoch. Every task comes once per epoch before any comes twice.
 */
export class TaskStream {
  readonly #tasks: readonly Task[];
  readonly #seed: number;
  readonly #key: string;
  #epoch: number;
  #position: number;
  #order: number[];

  constructor(tasks: readonly Task[], seed: number, key: string, at: TaskStreamPosition = { epoch: 0, position: 0 }) {
    this.#tasks = tasks;
    this.#seed = seed;
    this.#key = key;
    this.#epoch = at.epoch;
    this.#position = Math.min(at.position, tasks.length);
    this.#order = this.#orderOf(this.#epoch);
  }

  next(): Task {
    if (this.#position >= this.#tasks.length) {
      this.#epoch += 1;
      this.#position = 0;
      this.#order = this.#orderOf(this.#epoch);
    }
    const task = this.#tasks[this.#order[this.#position]!]!;
    this.#position += 1;
    return task;
  }

  position(): TaskStreamPosition {
    return { epoch: this.#epoch, position: this.#position };
  }

  #orderOf(epoch: number): number[] {
    return shuffleIndices(this.#tasks.length, hashString(`${this.#seed}:${this.#key}:${epoch}`));
  }
}
