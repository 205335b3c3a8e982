import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { bundleVmPlugin } from "../../plugins/index.ts";
import type { Manifest } from "../../sdk/env/manifest.ts";
/**
 * A fixture's vm bundle in a temporary folder for the calling `describe`: built before its tests, removed
 * after them. Returns a getter for the bundle's path.
 */
export function bundledForSuite(fixture: { dir: string; manifest: Manifest }, prefix: string): () => string {
  let tmp = "";
  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), prefix));
    await bundleVmPlugin(fixture.dir, fixture.manifest, join(tmp, "bundle.js"));
  });
  afterAll(async () => {
    await rm(tmp, { recursive: true, force: true });
  });
  return () => join(tmp, "bundle.js");
}
