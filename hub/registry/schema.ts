import { z } from "zod";

/** `registry.json`: the environment registry. name -> versions -> source, kind, sha256. */

const NAME = /^[a-z][a-z0-9-]{0,63}$/;
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;
const SHA256 = /^[0-9a-f]{64}$/;

/** A non-empty string with its description (the registry's JSON schema shows it). */
const nonEmpty = (description: string) => z.string().min(1).describe(description);

export const SourceSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("path"), path: nonEmpty("A plugin folder, relative to the registry file (a folder in this repo)") }),
  z.object({ type: z.literal("npm"), spec: nonEmpty("An npm package spec with an exact version, e.g. agentjet-env-foo@1.2.0") }),
  z.object({ type: z.literal("tarball"), url: nonEmpty("A .tgz/.tar path (relative to the registry file) or an http(s)/file URL") }),
  z.object({
    type: z.literal("git"),
    url: nonEmpty("A git URL"),
    commit: z.string().regex(/^[0-9a-f]{40}$/, "a full 40-hex commit id").describe("The exact commit"),
    subdir: z.string().optional().describe("The plugin folder inside the repository; the root when absent"),
  }),
]);
export type Source = z.infer<typeof SourceSchema>;

export const RegistryVersionSchema = z.object({
  source: SourceSchema,
  kind: z.enum(["vm", "docker"]),
  sha256: z
    .string()
    .regex(SHA256, "64 lower-case hex digits: the sha256 `agentjet env pack` prints")
    .describe("sha256 of the packed content (the canonical tar `agentjet env pack` makes)"),
  agentjet: z.string().optional().describe("The agentjet versions this version supports (semver range)"),
});
export type RegistryVersion = z.infer<typeof RegistryVersionSchema>;

export const RegistryEnvironmentSchema = z.object({
  description: z.string().min(1),
  tags: z.array(z.string().min(1)).default([]),
  license: z.string().min(1),
  homepage: z.string().optional(),
  versions: z
    .record(z.string().regex(SEMVER, "a semver version such as 1.0.0"), RegistryVersionSchema)
    .refine((v) => Object.keys(v).length > 0, "at least one version"),
});
export type RegistryEnvironment = z.infer<typeof RegistryEnvironmentSchema>;

export const RegistrySchema = z.object({
  $schema: z.string().optional(),
  environments: z.record(
    z.string().regex(NAME, "lower-case letters, digits and '-', starting with a letter"),
    RegistryEnvironmentSchema,
  ),
});
export type Registry = z.infer<typeof RegistrySchema>;

/** The JSON Schema editors use for `registry.json` (written to hub/registry/registry.schema.json). */
export function buildRegistryJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(RegistrySchema, { io: "input" }) as Record<string, unknown>;
}
