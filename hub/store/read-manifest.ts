import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Manifest } from "../../sdk/env/index.ts";
import { ManifestSchema } from "../../sdk/env/schemas.ts";
import { InvalidPluginError } from "./errors.ts";

export const MANIFEST_FILE = "agentjet.env.json";

/** Reads and validates a plugin folder's manifest; an invalid one names each field and what is wrong. */
export function readManifest(dir: string): Manifest {
  const path = join(dir, MANIFEST_FILE);
  // a folder that is not there is said as such (it was "has no agentjet.env.json: not an environment plugin")
  const stat = statSync(dir, { throwIfNoEntry: false });
  if (stat === undefined) throw new InvalidPluginError(`${dir} does not exist`);
  if (!stat.isDirectory()) throw new InvalidPluginError(`${dir} is not a directory (an environment plugin is a folder with ${MANIFEST_FILE})`);
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
