import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Manifest, ManifestSchema } from "../../sdk/env/manifest.ts";

export const FIXTURES = join(import.meta.dirname, "fixtures");

/** Loads a fixture plugin's folder and manifest, with optional overrides of the manifest. */
export function loadFixture(name: string, override: Partial<Manifest> = {}): { dir: string; manifest: Manifest } {
  const dir = join(FIXTURES, name);
  const raw = JSON.parse(readFileSync(join(dir, "agentjet.env.json"), "utf8")) as Record<string, unknown>;
  return { dir, manifest: ManifestSchema.parse({ ...raw, ...override }) };
}
