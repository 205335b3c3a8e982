/** The run config: its schema (the one home), loading YAML with located issues, its JSON Schema and docs. Light: zod and yaml only. */
export { renderConfigDocs } from "./config-docs.ts";
export { runConfigJsonSchema, schemaAlternatives, type JsonSchemaNode } from "./json-schema.ts";
export { checkRunConfig, formatConfigIssues, loadRunConfig, parseRunConfig } from "./load-run-config.ts";
export {
  EmbeddedModelSchema,
  OptimizerSchema,
  RunConfigSchema,
  WarmStartSchema,
  type EnvironmentEntry,
  type RunConfig,
  type WarmStartConfig,
} from "./run-config.ts";
export { allZeroStep, noWeightMessage, weightAt, type Weight, type WeightSchedule } from "./weights.ts";
