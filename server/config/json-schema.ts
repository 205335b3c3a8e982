import { z } from "zod";
import { RunConfigSchema } from "./run-config.ts";

/** The run config's JSON Schema, for editor completion (`# yaml-language-server: $schema=...`) and the docs. */
export function runConfigJsonSchema(): Record<string, unknown> {
  return {
    title: "agentjet run config",
    ...(z.toJSONSchema(RunConfigSchema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>),
  };
}

/** A node's alternatives (`anyOf`, or zod's discriminated `oneOf`), or the node itself when it has none. */
export function schemaAlternatives(s: JsonSchemaNode): JsonSchemaNode[] {
  return s.anyOf ?? s.oneOf ?? [s];
}

/** The parts of a JSON Schema node (as zod's toJSONSchema writes them) that our docs and field-path checks read. */
export type JsonSchemaNode = {
  type?: string | string[];
  properties?: Record<string, JsonSchemaNode>;
  additionalProperties?: JsonSchemaNode | boolean;
  items?: JsonSchemaNode;
  anyOf?: JsonSchemaNode[];
  /** zod's discriminated unions. */
  oneOf?: JsonSchemaNode[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  description?: string;
  required?: string[];
  pattern?: string;
};
