import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { AppState, Supervisor } from "./apps.ts";
import type { Check } from "./evaluate.ts";

/** One synthetic task, read from a data folder shaped like AppWorld's (`data/tasks/<id>/...`). */
export interface StandInTask {
  id: string;
  instruction: string;
  supervisor: Supervisor;
  datetime: string;
  difficulty: number;
  state: AppState;
  tests: Array<{ requirement: string; label?: string | null; check: Check }>;
}

/** Thrown when a task's files are missing; the server answers it with a 500, as AppWorld does. */
export class TaskNotFoundError extends Error {}

function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, "utf8"));
}

export function loadTask(dataDir: string, taskId: string): StandInTask {
  if (!/^[A-Za-z0-9_]+$/.test(taskId)) throw new TaskNotFoundError(`invalid task id ${taskId}`);
  const dir = join(dataDir, "tasks", taskId);
  try {
    const specs = readJson(join(dir, "specs.json")) as Omit<StandInTask, "id" | "state" | "tests">;
    const state = readJson(join(dir, "dbs", "state.json")) as AppState;
    const tests = readJson(join(dir, "ground_truth", "tests.json")) as StandInTask["tests"];
    return { id: taskId, ...specs, state, tests };
  } catch (err) {
    throw new TaskNotFoundError(`no task ${taskId} under ${dataDir}: ${(err as Error).message}`);
  }
}
