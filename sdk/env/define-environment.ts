import type { GenerateTasksRequest, ResetRequest, SolveRequest, StepRequest, Task, Turn } from "./protocol.ts";

/** The dynamics of one episode. A fresh one is made for every episode, so no state leaks between them. */
export interface EpisodeDynamics {
  reset(input: ResetRequest): Turn | Promise<Turn>;
  step(input: StepRequest): Turn | Promise<Turn>;
  close?(): void | Promise<void>;
}

export interface EnvironmentDefinition {
  /** Makes the dynamics of one episode. */
  createEpisode(): EpisodeDynamics;
  /**
   * Generates tasks for a split the manifest declares as `{ generate: N }`. Must be a pure function of
   * its input: the same seed gives the same tasks.
   */
  generateTasks?(input: GenerateTasksRequest): Task[];
  /**
   * A reference agent for the conformance suite (`agentjet env test`): given an agent's conversation so
   * far, the action that earns the top of the reward range.
   */
  solve?(input: SolveRequest): string;
}

/** Identity helper that gives plugin authors types without ceremony. */
export function defineEnvironment(definition: EnvironmentDefinition): EnvironmentDefinition {
  return definition;
}
