// Type-only imports from the SDK: an installed plugin lives outside this repository, and types leave no import behind.
import type { EnvironmentDefinition, EpisodeDynamics } from "../../../sdk/env/define-environment.ts";
import type { Turn } from "../../../sdk/env/protocol.ts";
import { type CountdownProblem, generateCountdownTasks, promptOf, readProblem } from "./problem.ts";
import { scoreReply } from "./score.ts";

const AGENT = "solver";

function createEpisode(): EpisodeDynamics {
  let problem: CountdownProblem | null = null;
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
      const s = scoreReply(actions[AGENT] ?? "", problem);
      finished = { observations: {}, done: true, rewards: { [AGENT]: s.reward }, info: { verdict: s.verdict, target: problem.target } };
      return finished;
    },
  };
}

export const environment: EnvironmentDefinition = {
  createEpisode,
  generateTasks: ({ split, seed, count }) => generateCountdownTasks(split, seed, count),
  solve({ task }) {
    return readProblem(task.data)?.solution ?? "";
  },
};
