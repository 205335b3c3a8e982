import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Manifest } from "../../sdk/env/index.ts";
import { ManifestSchema } from "../../sdk/env/schemas.ts";
import { InvalidPluginError } from "./errors.ts";

export const MANIFEST_FILE = "agentjet.env.json";

/** Reads and validates a plugin folder's manifest; an invalid one names each field and what is wrong. */
export function readManifest(dir: string): Manifest {
  const path = join(dir, MANIFEST_FILE);
  if (!existsSync(path)) throw new InvalidPluginError(`${dir} has no ${MANIFEST_FILE}: not an environment plugin`);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (cause) {
    throw new InvalidPluginError(`${path} is not valid JSON: ${(cause as Error).message}`, cause);
  }
  const parsed = ManifestSchema.safeParse(json);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new InvalidPluginError(`${path} is invalid:\n${lines.join("\n")}`, parsed.error);
  }
  return parsed.data;
}
