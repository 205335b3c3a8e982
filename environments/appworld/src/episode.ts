import type { EpisodeDynamics } from "../../../sdk/env/define-environment.ts";
import type { ResetRequest, StepRequest, Turn } from "../../../sdk/env/protocol.ts";
import type { AppWorldClient } from "./appworld-client.ts";
import { extractPythonCode } from "./extract-code.ts";
import { outputMessage, systemPrompt, taskPrompt } from "./prompt.ts";
import { computeReward, passFraction } from "./reward.ts";
import { readTaskOptions, type TaskOptions } from "./task-options.ts";

export const AGENT = "solver";
/** Outputs go under `experiments/outputs/<this>/` of the AppWorld root (a scratch volume in the container). */
export const EXPERIMENT_NAME = "agentjet";
const APP_DESCRIPTIONS_CODE = "print(apis.api_docs.show_app_descriptions())";

/**
 * One AppWorld episode on the server's single world: `/initialize` at reset, one `/execute` per agent
 * turn (the first ```python block of its answer), `/task_completed` after each, `/evaluate` at the end
 * (task completed or step cap), `/close` when the episode closes. Server errors throw: the episode then
 * fails as an infrastructure failure, never as reward 0.
 */
export function createAppWorldEpisode(client: AppWorldClient): EpisodeDynamics {
  let taskId: string | undefined;
  let options: TaskOptions | undefined;
  let steps = 0;
  let done = false;

  return {
    async reset(input: ResetRequest): Promise<Turn> {
      options = readTaskOptions(input.task.data);
      const info = await client.initialize({
        task_id: input.task.id,
        experiment_name: EXPERIMENT_NAME,
        remote_docker: false,
        // One extra interaction for the app list read below.
        max_interactions: options.maxSteps + 1,
        random_seed: input.seed,
        timeout_seconds: options.executionTimeoutS,
      });
      taskId = info.task_id;
      const apps = await client.execute(taskId, APP_DESCRIPTIONS_CODE);
      return {
        observations: {
          [AGENT]: {
            messages: [
              { role: "system", content: systemPrompt(apps, options.maxSteps) },
              { role: "user", content: taskPrompt(info) },
            ],
          },
        },
        done: false,
        info: { task_id: info.task_id },
      };
    },

    async step(input: StepRequest): Promise<Turn> {
      if (!taskId || !options) throw new Error("step before reset");
      if (done) throw new Error("step after the episode ended");
      steps++;
      const code = extractPythonCode(input.actions[AGENT] ?? "");
      const output = code === undefined ? undefined : await client.execute(taskId, code);
      const completed = await client.taskCompleted(taskId);
      if (!completed && steps < options.maxSteps) {
        return { observations: { [AGENT]: { messages: [{ role: "user", content: outputMessage(output) }] } }, done: false };
      }
      done = true;
      const evaluation = await client.evaluate(taskId);
      return {
        observations: {},
        done: true,
        rewards: { [AGENT]: computeReward(evaluation, options.reward) },
        info: {
          task_id: taskId,
          success: evaluation.success,
          completed,
          steps,
          num_tests: evaluation.num_tests,
          passed: evaluation.passes.length,
          pass_fraction: passFraction(evaluation),
          failures: evaluation.failures.map((f) => f.requirement),
        },
      };
    },

    async close(): Promise<void> {
      const id = taskId;
      taskId = undefined;
      if (id) await client.close(id);
    },
  };
}
