/** The agentjet SDK: the swarm client for workflows, and the environment-author library. */
export * from "./swarm/index.ts";
export { defineEnvironment, type EnvironmentDefinition, type EpisodeDynamics } from "./env/define-environment.ts";
