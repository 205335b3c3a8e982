import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readManifest } from "../../hub/store/read-manifest.ts";
import { removeTempDirs, tempDir } from "./helpers.ts";

afterAll(removeTempDirs);

// Regression: `agentjet env pack <a folder that is not there>` said it "has no agentjet.env.json".
describe("readManifest", () => {
  it("says whether the plugin folder is missing, not a folder, or holds no manifest", () => {
    const dir = tempDir("read-manifest");
    const file = join(dir, "file.txt");
    writeFileSync(file, "x");
    const empty = join(dir, "empty");
    mkdirSync(empty);
    const error = (d: string) => {
      try {
        readManifest(d);
        return "read";
      } catch (err) {
        return `${(err as { code?: string }).code}: ${(err as Error).message}`;
      }
    };
    expect(error(join(dir, "missing"))).toBe(`AJ_ERR_STORE_INVALID_PLUGIN: ${join(dir, "missing")} does not exist`);
    expect(error(file)).toBe(`AJ_ERR_STORE_INVALID_PLUGIN: ${file} is not a directory (an environment plugin is a folder with agentjet.env.json)`);
    expect(error(empty)).toBe(`AJ_ERR_STORE_INVALID_PLUGIN: ${empty} has no agentjet.env.json: not an environment plugin`);
  });
});
