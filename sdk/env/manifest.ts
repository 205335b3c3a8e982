import { z } from "zod";

/** `agentjet.env.json`: the manifest every environment plugin carries. Validated at every boundary. */

const NAME = /^[a-z][a-z0-9-]{0,63}$/;
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

export const SplitSchema = z.union([
  z.object({ file: z.string().min(1).describe("A JSONL file in the plugin, one task per line") }),
  z.object({ generate: z.number().int().positive().describe("How many tasks the plugin's generateTasks makes") }),
  z.object({ external: z.string().min(1).describe("Tasks read at run time from user-supplied data (e.g. a mounted folder)") }),
]);
export type Split = z.infer<typeof SplitSchema>;

export const LimitsSchema = z.object({
  memoryMb: z.number().int().positive().default(128).describe("Memory cap per instance, MiB"),
  callTimeoutMs: z.number().int().positive().default(5_000).describe("Time limit for one reset/step"),
  cpus: z.number().positive().default(1).describe("CPU share per instance (docker)"),
  pids: z.number().int().positive().default(64).describe("Process cap per instance (docker)"),
  startTimeoutMs: z.number().int().positive().default(30_000).describe("Time limit for an instance to become ready"),
});
export type Limits = z.infer<typeof LimitsSchema>;

export const DockerSchema = z.object({
  dockerfile: z.string().default("Dockerfile"),
  image: z.string().optional().describe("Use this local image instead of building one"),
  network: z.enum(["none", "internal"]).default("none"),
  port: z.number().int().positive().optional().describe("Port the instance serves the protocol on; stdio when absent"),
  command: z.array(z.string()).optional(),
  mounts: z
    .array(z.object({ name: z.string(), target: z.string(), readOnly: z.boolean().default(true) }))
    .default([])
    .describe("Host folders the user supplies at install time (e.g. licensed data), by name"),
});

export const ManifestSchema = z.object({
  name: z.string().regex(NAME, "lower-case letters, digits and '-', starting with a letter"),
  version: z.string().regex(SEMVER, "a semver version such as 1.0.0"),
  description: z.string().min(1),
  license: z.string().min(1),
  kind: z.enum(["vm", "docker"]),
  entry: z.string().min(1).describe("The plugin's code entry, relative to the plugin folder"),
  prepare: z
    .string()
    .optional()
    .describe(
      "A host-side module run at install time that writes dataset files into the store (from --data, or a download). " +
        "It exports `prepare(ctx: PrepareContext)` (sdk/env/prepare.ts).",
    ),
  agents: z
    .array(z.object({ id: z.string().min(1), role: z.string().min(1) }))
    .min(1)
    .describe("The seats of an episode and their roles; roles are what the run config maps to policies"),
  splits: z.record(z.string(), SplitSchema).refine((s) => Object.keys(s).length > 0, "at least one split"),
  limits: LimitsSchema.default(LimitsSchema.parse({})),
  reward: z.object({ min: z.number(), max: z.number() }).refine((r) => r.min < r.max, "min must be below max"),
  agentjet: z.string().default("^0.1.0").describe("The agentjet versions this plugin supports (semver range)"),
  reusable: z.boolean().default(true).describe("Whether an instance may serve several episodes in turn"),
  docker: DockerSchema.optional(),
  dependencies: z.record(z.string(), z.string()).default({}),
  installScripts: z
    .boolean()
    .optional()
    .describe("Whether npm install scripts of the plugin's dependencies may run at install time (default: no)"),
});
export type Manifest = z.infer<typeof ManifestSchema>;
