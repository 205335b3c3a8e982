import { type AppState, createApis } from "./apps.ts";
import { evaluateWorld, type TestTrackerDict } from "./evaluate.ts";
import { SubsetShell, type Value } from "./interpreter.ts";
import type { StandInTask } from "./task-files.ts";

/** One task world: the apps' databases, a stateful shell over them, and the completion flag. */
export class World {
  readonly #start: AppState;
  readonly #state: AppState;
  readonly #shell: SubsetShell;
  #interactions = 0;
  #completed = false;
  #answer: Value = null;

  constructor(
    readonly task: StandInTask,
    private readonly maxInteractions: number,
  ) {
    this.#start = structuredClone(task.state);
    this.#state = structuredClone(task.state);
    const apis = createApis({
      state: this.#state,
      supervisor: task.supervisor,
      completeTask: (answer) => {
        this.#completed = true;
        this.#answer = answer;
      },
    });
    this.#shell = new SubsetShell({ apis });
  }

  execute(code: string): string {
    const trimmed = code.trim();
    this.#interactions++;
    if (this.#interactions > this.maxInteractions) {
      return `Execution failed. Traceback:\n  File "<python-input>", line 1, in <module>\nException: Maximum number of executions (${this.maxInteractions}) reached.`;
    }
    if (!trimmed) return "No code available to execute.";
    return this.#shell.run(trimmed);
  }

  taskCompleted(): boolean {
    return this.#completed;
  }

  evaluate(): TestTrackerDict {
    return evaluateWorld({ tests: this.task.tests, difficulty: this.task.difficulty, start: this.#start, end: this.#state, answer: this.#answer });
  }
}
