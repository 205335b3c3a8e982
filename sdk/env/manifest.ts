import { z } from "zod";
import { RewardModelsSchema } from "../rewards/spec.ts";

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
  memoryMb: z
    .number()
    .int()
    .positive()
    .default(128)
    .describe("Memory cap per instance, MiB: the isolate's heap (vm) or the container's memory (docker). An instance over it fails only its episode (kind oom) and is replaced"),
  callTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(5_000)
    .describe("Time limit for one call (reset, step, tasks, solve), ms, including work after an await. A call over it fails its episode (kind timeout) and the instance is replaced"),
  cpus: z.number().positive().default(1).describe("CPU share per instance (docker)"),
  pids: z.number().int().positive().default(64).describe("Process cap per instance (docker)"),
  startTimeoutMs: z.number().int().positive().default(30_000).describe("Time limit for an instance to become ready"),
});
export type Limits = z.infer<typeof LimitsSchema>;

export const DockerSchema = z.object({
  dockerfile: z
    .string()
    .default("Dockerfile")
    .describe("The Dockerfile, relative to the plugin folder. Built offline, never pulling, with the build arg AGENTJET_NODE_BASE (a FROM-scratch image with Node and no shell: COPY works, RUN does not) and AGENTJET_PYTHON_BASE (the same with the host's Python 3)"),
  image: z.string().optional().describe("Use this local image instead of building one"),
  network: z.enum(["none", "internal"]).default("none").describe("`none`: no network at all; `internal`: a network with no route out (for `port`)"),
  port: z.number().int().positive().optional().describe("Port the instance serves the protocol on; stdio when absent"),
  sharedLoopback: z
    .boolean()
    .default(false)
    .describe(
      "With `network: none` under runc, the instances of this plugin join one loopback-only network namespace instead of each making its own (about half of a cold start). Only for plugins that never listen on a port inside the container: instances that share it share 127.0.0.1 and its ports",
    ),
  command: z.array(z.string()).optional().describe("Overrides the image's command (CMD)"),
  mounts: z
    .array(
      z.object({
        name: z.string().describe("The name the user gives a host folder with `--mount <name>=<path>`"),
        target: z.string().describe("Where the folder appears in the container"),
        readOnly: z.boolean().default(true),
      }),
    )
    .default([])
    .describe("Host folders the user supplies at install time (e.g. licensed data), by name"),
});

export const ManifestSchema = z.object({
  name: z
    .string()
    .regex(NAME, "lower-case letters, digits and '-', starting with a letter")
    .describe("The registry key and the `env` a run config names: lower-case letters, digits and '-', starting with a letter"),
  version: z.string().regex(SEMVER, "a semver version such as 1.0.0").describe("Semver; a published version never changes its hash"),
  description: z.string().min(1).describe("One line for `agentjet env list`"),
  license: z.string().min(1).describe("An SPDX identifier (Apache-2.0, MIT, ...)"),
  kind: z
    .enum(["vm", "docker"])
    .describe(
      "`vm`: a V8 isolate (no Node APIs, files or network; npm dependencies are bundled in, `browser` fields apply). " +
        "`docker`: a container built offline from `docker.dockerfile` (Node APIs, native code, files, another runtime)",
    ),
  entry: z.string().min(1).describe("The plugin's code entry, relative to the plugin folder"),
  prepare: z
    .string()
    .optional()
    .describe(
      "A host-side module run at install time that writes dataset files into the store (from --data, or a download). " +
        "It exports `prepare(ctx: PrepareContext)` (sdk/env/prepare.ts).",
    ),
  agents: z
    .array(
      z.object({
        id: z.string().min(1).describe("The seat's id: the key of observations, actions and rewards"),
        role: z.string().min(1).describe("The seat's role"),
      }),
    )
    .min(1)
    .describe("The seats of an episode and their roles; roles are what the run config maps to policies"),
  splits: z
    .record(z.string(), SplitSchema)
    .refine((s) => Object.keys(s).length > 0, "at least one split")
    .describe("The datasets, by split name (train, test, ...); at least one"),
  limits: LimitsSchema.default(LimitsSchema.parse({})).describe("Resource limits of one instance"),
  reward: z
    .object({
      min: z.number().describe("The lowest reward an agent can get"),
      max: z.number().describe("The highest; the conformance suite's `solve` check expects the reference agent to reach it"),
    })
    .refine((r) => r.min < r.max, "min must be below max")
    .describe("The reward range: every reward the environment gives must lie in [min, max]"),
  rewardModels: RewardModelsSchema.optional(),
  agentjet: z.string().default("^0.1.0").describe("The agentjet versions this plugin supports (semver range)"),
  reusable: z.boolean().default(true).describe("Whether an instance may serve several episodes in turn"),
  docker: DockerSchema.optional().describe("kind docker: how the image is built and run"),
  dependencies: z
    .record(z.string(), z.string())
    .default({})
    .describe("npm dependencies (name -> version range), merged with package.json's `dependencies`; installed into the environment's own node_modules"),
  installScripts: z
    .boolean()
    .optional()
    .describe("Whether npm install scripts of the plugin's dependencies may run at install time (default: no)"),
});
export type Manifest = z.infer<typeof ManifestSchema>;
