// Type-only imports from the SDK: an installed plugin lives outside this repository, and types leave no import behind.
import type { EnvironmentDefinition, EpisodeDynamics } from "../../../sdk/env/define-environment.ts";
import type { Turn } from "../../../sdk/env/protocol.ts";
import { type AimeTaskData, readTaskData } from "./task-data.ts";
import { verifyAnswer } from "./verify.ts";

export const SOLVER = "solver";

const SYSTEM_PROMPT: Record<AimeTaskData["mode"], string> = {
  integer:
    "Solve the problem. Reason step by step, then give the final answer, an integer from 0 to 999, as \\boxed{N}.",
  math: "Solve the problem. Reason step by step, then give the final answer as \\boxed{...}.",
};

function createEpisode(): EpisodeDynamics {
  let task: AimeTaskData | null = null;
  let finished: Turn | null = null;
  return {
    reset({ task: t }) {
      task = readTaskData(t);
      finished = null;
      return {
        observations: {
          [SOLVER]: {
            messages: [
              { role: "system", content: SYSTEM_PROMPT[task.mode] },
              { role: "user", content: task.problem },
            ],
          },
        },
        done: false,
      };
    },
    step({ actions }) {
      if (finished !== null) return { ...finished, info: { ...finished.info, note: "episode already done" } };
      if (task === null) return { observations: {}, done: true, rewards: { [SOLVER]: 0 }, info: { flags: ["no-reset"] } };
      const response = actions[SOLVER];
      const v =
        response === undefined
          ? { correct: false, reward: 0, answer: null, source: null, flags: ["no-answer", "no-action"] }
          : verifyAnswer(task.answer, response, { mode: task.mode });
      finished = {
        observations: {},
        done: true,
        rewards: { [SOLVER]: v.reward },
        info: { correct: v.correct, answer: v.answer, source: v.source, flags: v.flags, gold: task.answer },
      };
      return finished;
    },
  };
}

export const environment: EnvironmentDefinition = {
  createEpisode,
  solve({ task }) {
    return `The final answer is \\boxed{${readTaskData(task).answer}}.`;
  },
};
