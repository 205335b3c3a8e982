// Type-only imports from the SDK: an installed plugin lives outside this repository, and types leave no import behind.
import type { EnvironmentDefinition, EpisodeDynamics } from "../../../sdk/env/define-environment.ts";
import type { Turn } from "../../../sdk/env/protocol.ts";
import { type ArithProblem, generateArithTasks, promptOf, readProblem } from "./problem.ts";
import { scoreReply } from "./score.ts";

const AGENT = "solver";

function createEpisode(): EpisodeDynamics {
  let problem: ArithProblem | null = null;
  let finished: Turn | null = null;
  return {
    reset({ task }) {
      problem = readProblem(task.data);
      finished = null;
      if (problem === null) {
        finished = { observations: {}, done: true, rewards: { [AGENT]: 0 }, info: { error: "invalid task data" } };
        return finished;
      }
      return { observations: { [AGENT]: { messages: [{ role: "user", content: promptOf(problem) }] } }, done: false };
    },
    step({ actions }) {
      if (finished !== null || problem === null) {
        return finished ?? { observations: {}, done: true, rewards: { [AGENT]: 0 }, info: { error: "step before reset" } };
      }
      const reply = actions[AGENT] ?? "";
      const s = scoreReply(reply, problem.answer);
      finished = {
        observations: {},
        done: true,
        rewards: { [AGENT]: s.reward },
        info: { correct: s.correct, wellFormed: s.wellFormed, answer: problem.answer },
      };
      return finished;
    },
  };
}

export const environment: EnvironmentDefinition = {
  createEpisode,
  generateTasks: ({ split, seed, count }) => generateArithTasks(split, seed, count),
  solve({ task }) {
    const p = readProblem(task.data);
    return p === null ? "" : String(p.answer);
  },
};
