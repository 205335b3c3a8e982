import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildRegistryJsonSchema, findVersion, loadRegistry, packTree, parseRegistry } from "../../hub/registry/index.ts";
import { REPO } from "./helpers.ts";

describe("registry", () => {
  it("ships a JSON Schema that matches the zod schema", () => {
    const file = JSON.parse(readFileSync(join(REPO, "hub", "registry", "registry.schema.json"), "utf8"));
    expect(file).toEqual(buildRegistryJsonSchema());
  });

  it("lists every built-in environment with the hash of its folder", async () => {
    const { registry, base } = await loadRegistry(join(REPO, "registry.json"));
    const names = Object.keys(registry.environments);
    expect(names).toEqual(expect.arrayContaining(["aime", "arith", "countdown", "guess-number", "tictactoe"]));
    for (const [name, env] of Object.entries(registry.environments)) {
      for (const [version, entry] of Object.entries(env.versions)) {
        if (entry.source.type !== "path") continue;
        // A stale hash means the folder changed: run `agentjet env pack environments/<name> --write-registry registry.json`.
        expect({ name, version, sha256: packTree(join(base, entry.source.path)).sha256 }).toEqual({ name, version, sha256: entry.sha256 });
      }
    }
  });

  it("names the offending field of an invalid registry", () => {
    const bad = JSON.stringify({ environments: { Bad: { description: "", license: "x", versions: {} } } });
    expect(() => parseRegistry(bad, "r.json")).toThrowError(expect.objectContaining({ code: "AJ_ERR_REGISTRY_INVALID" }));
    const bad2 = JSON.stringify({ environments: { ok: { description: "d", license: "x", versions: { "1.0.0": { source: { type: "path", path: "p" }, kind: "vm", sha256: "abc" } } } } });
    expect(() => parseRegistry(bad2, "r.json")).toThrowError(/environments\.ok\.versions\.1\.0\.0\.sha256/);
  });

  it("picks the newest release unless a version is named", () => {
    const sha = "0".repeat(64);
    const v = { source: { type: "path", path: "p" }, kind: "vm", sha256: sha };
    const registry = parseRegistry(JSON.stringify({ environments: { e: { description: "d", license: "x", versions: { "1.2.0": v, "1.10.0": v, "2.0.0-rc.1": v } } } }), "r");
    expect(findVersion(registry, "e").version).toBe("1.10.0");
    expect(findVersion(registry, "e", "2.0.0-rc.1").version).toBe("2.0.0-rc.1");
    expect(() => findVersion(registry, "e", "9.9.9")).toThrowError(expect.objectContaining({ code: "AJ_ERR_ENV_NOT_FOUND" }));
    expect(() => findVersion(registry, "nope")).toThrowError(expect.objectContaining({ code: "AJ_ERR_ENV_NOT_FOUND" }));
  });
});
