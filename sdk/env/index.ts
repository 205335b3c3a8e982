/**
 * `agentjet/sdk/env`: what an environment's code imports. Free of Node APIs and of runtime dependencies,
 * so a vm plugin can import it; the stdio/HTTP servers for docker entries are `agentjet/sdk/env/serve`.
 */
export { defineEnvironment, type EnvironmentDefinition, type EpisodeDynamics } from "./define-environment.ts";
export type { Limits, Manifest, Split } from "./manifest.ts";
export type { PrepareContext, PrepareFunction } from "./prepare.ts";
export type {
  BatchCall,
  BatchReply,
  BatchRequest,
  EnvMessage,
  GenerateTasksRequest,
  HostRequest,
  InstanceReply,
  Observation,
  ResetRequest,
  ResponseFormat,
  SolveRequest,
  StepRequest,
  Task,
  Turn,
} from "./protocol.ts";
