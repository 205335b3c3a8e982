import { z } from "zod";
import { RunConfigSchema } from "./run-config.ts";

/** The run config's JSON Schema, for editor completion (`# yaml-language-server: $schema=...`) and the docs. */
export function runConfigJsonSchema(): Record<string, unknown> {
  return {
    title: "agentjet run config",
    ...(z.toJSONSchema(RunConfigSchema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>),
  };
}
