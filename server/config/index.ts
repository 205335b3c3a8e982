/** The run config: its schema (the one home), loading YAML with located issues, its JSON Schema and docs. Light: zod and yaml only. */
export { renderConfigDocs } from "./config-docs.ts";
export { runConfigJsonSchema, type JsonSchemaNode } from "./json-schema.ts";
export { formatConfigIssues, loadRunConfig, parseRunConfig, type ConfigIssue, type LoadRunConfigResult } from "./load-run-config.ts";
export {
  AdvantageSchema,
  BatchingSchema,
  EmbeddedModelSchema,
  EngineSchema,
  EnvironmentEntrySchema,
  FrozenModelSchema,
  MergingSchema,
  OptimizerSchema,
  PolicySchema,
  RunConfigSchema,
  SamplingSchema,
  ScheduleSchema,
  WarmStartSchema,
  type EngineConfig,
  type EnvironmentEntry,
  type FrozenModelConfig,
  type PolicyConfig,
  type RunConfig,
  type WarmStartConfig,
} from "./run-config.ts";
