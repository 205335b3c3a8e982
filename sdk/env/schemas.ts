/** `agentjet/sdk/env/schemas`: the zod schemas of the manifest and the environment protocol, for validating in tests and tools. */
export { DockerSchema, LimitsSchema, ManifestSchema, SplitSchema } from "./manifest.ts";
export {
  BatchCallSchema,
  BatchReplySchema,
  BatchRequestSchema,
  EnvMessageSchema,
  GenerateTasksRequestSchema,
  HostRequestSchema,
  InstanceReplySchema,
  ObservationSchema,
  ResetRequestSchema,
  ResponseFormatSchema,
  SolveRequestSchema,
  StepRequestSchema,
  TaskSchema,
  TurnSchema,
} from "./protocol.ts";
