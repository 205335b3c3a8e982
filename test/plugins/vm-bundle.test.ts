import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openEnvironment } from "../../plugins/index.ts";
import { ManifestSchema } from "../../sdk/env/manifest.ts";
import { vmManifest } from "../helpers/vm-manifest.ts";
import { playClean } from "./fault-suite.ts";

/** A plugin folder written at test time, with its own node_modules (which git would not keep as a fixture). */
async function writePlugin(root: string, depSource: string, pkgExtra: Record<string, unknown> = {}): Promise<void> {
  await mkdir(join(root, "node_modules", "tiny-dep"), { recursive: true });
  await writeFile(join(root, "node_modules", "tiny-dep", "package.json"), JSON.stringify({ name: "tiny-dep", version: "1.0.0", main: "index.js", ...pkgExtra }));
  await writeFile(join(root, "node_modules", "tiny-dep", "index.js"), depSource);
  await writeFile(
    join(root, "index.ts"),
    [
      'import { winningWord } from "tiny-dep";',
      "export const environment = {",
      "  createEpisode() {",
      "    return {",
      '      reset: () => ({ observations: { solver: { messages: [{ role: "user", content: "go" }] } }, done: false }),',
      "      step: ({ actions }: { actions: Record<string, string> }) =>",
      "        ({ observations: {}, done: true, rewards: { solver: actions.solver === winningWord() ? 1 : 0 } }),",
      "    };",
      "  },",
      "};",
    ].join("\n"),
  );
}

const manifest = ManifestSchema.parse(vmManifest({ name: "with-dep", entry: "index.ts", description: "a plugin with its own dependency" }));

describe("bundleVmPlugin: dependencies", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "aj-plugin-"));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** Writes the plugin in `root/name` with this dependency, opens it and plays one clean episode: its reward. */
  async function playWithDependency(name: string, depSource: string, pkgExtra?: Record<string, unknown>): Promise<number | undefined> {
    const dir = join(root, name);
    await writePlugin(dir, depSource, pkgExtra);
    const rt = await openEnvironment({ dir, manifest });
    const reward = await playClean(rt);
    await rt.close();
    return reward;
  }

  it("bundles the plugin's own npm dependency from its node_modules", async () => {
    expect(await playWithDependency("ok", 'exports.winningWord = () => "hi";')).toBe(1);
  });

  it("fails when a dependency needs a node builtin, naming the dependency's file", async () => {
    const dir = join(root, "bad");
    await writePlugin(dir, 'const crypto = require("crypto"); exports.winningWord = () => crypto.randomUUID();');
    const err = await openEnvironment({ dir, manifest }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "AJ_ERR_PLUGIN_BUNDLE_BUILTIN" });
    expect((err as Error).message).toContain('"crypto"');
    expect((err as Error).message).toContain("node_modules/tiny-dep/index.js");
    expect((err as Error).message).toContain('the dependency "tiny-dep" imports the Node builtin "crypto"');
    // ... and what to do about it (issue 22, item 2).
    expect((err as Error).message).toContain("Use a dependency (or version) that does not need it, or make this a docker plugin");
  });

  it("respects a dependency's browser field that maps a builtin to false", async () => {
    const source = 'const c = require("crypto"); exports.winningWord = () => (c.randomUUID ? "node" : "hi");';
    expect(await playWithDependency("browser-field", source, { browser: { crypto: false } })).toBe(1);
  });

  it("leaves a guarded require of a builtin to fail at run time, inside its try", async () => {
    expect(await playWithDependency("guarded", 'let c; try { c = require("crypto"); } catch {} exports.winningWord = () => (c ? "node" : "hi");')).toBe(1);
  });

  it("says to run npm install when a declared dependency is not installed", async () => {
    const dir = join(root, "not-installed");
    await writePlugin(dir, "");
    await rm(join(dir, "node_modules"), { recursive: true });
    await writeFile(join(dir, "package.json"), JSON.stringify({ dependencies: { "tiny-dep": "1.0.0" } }));
    const err = await openEnvironment({ dir, manifest }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "AJ_ERR_PLUGIN_BUNDLE_MISSING_DEP" });
    expect((err as Error).message).toContain('"tiny-dep" (imported by index.ts) is in package.json but not installed: run `npm install`');
    await writeFile(join(dir, "package.json"), JSON.stringify({ dependencies: {} }));
    const undeclared = await openEnvironment({ dir, manifest }).catch((e: unknown) => e);
    expect((undeclared as Error).message).toContain("run `npm install tiny-dep`");
  });
});
