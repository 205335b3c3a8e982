import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { z } from "zod";
import { SourceSchema } from "../registry/schema.ts";
import { InvalidLockfileError } from "./errors.ts";
import { lockPath } from "./paths.ts";

/** `agentjet.lock`: pins each installed environment's exact version, content hash and install inputs. */
export const LockEntrySchema = z.object({
  version: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  kind: z.enum(["vm", "docker"]),
  /** Where the content came from, resolved (absolute path or URL), so the lock alone reinstalls it. */
  source: SourceSchema,
  /** Options the prepare hook got (`--data`, `--option k=v`). */
  options: z.record(z.string(), z.string()).default({}),
  /** docker: host folders for the manifest's named mounts. */
  mounts: z.record(z.string(), z.string()).default({}),
  /** docker: the image the environment runs (built and tagged with the content hash, or `--image`). */
  image: z.string().optional(),
  /** docker: whether `image` was given by the user (`--image`) rather than built. */
  imageProvided: z.boolean().optional(),
});
export type LockEntry = z.infer<typeof LockEntrySchema>;

export const LockfileSchema = z.object({
  lockfileVersion: z.literal(1),
  environments: z.record(z.string(), LockEntrySchema),
});
export type Lockfile = z.infer<typeof LockfileSchema>;

export function readLockfile(projectDir: string): Lockfile {
  const path = lockPath(projectDir);
  if (!existsSync(path)) return { lockfileVersion: 1, environments: {} };
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (cause) {
    throw new InvalidLockfileError(`${path} is not valid JSON`, cause);
  }
  const parsed = LockfileSchema.safeParse(json);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new InvalidLockfileError(`${path} is invalid:\n${lines.join("\n")}`, parsed.error);
  }
  return parsed.data;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** Stable JSON: sorted keys, two-space indent, trailing newline. */
export function stableJson(value: unknown): string {
  return `${JSON.stringify(sortKeys(value), null, 2)}\n`;
}

/** Writes atomically (temp file, then rename). */
export function writeLockfile(projectDir: string, lock: Lockfile): void {
  const path = lockPath(projectDir);
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, stableJson(lock));
  renameSync(tmp, path);
}
