import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { openEnvironment } from "../../plugins/index.ts";
import { gzipTar, packTree } from "../../hub/registry/index.ts";
import { addEnvironment, installFromLock, readLockfile, resolveInstalled } from "../../hub/store/index.ts";
import { depSixFixture, FIXTURES, snapshotTree, removeTempDirs, tempDir } from "./helpers.ts";

async function firstObservation(project: string, name: string): Promise<string> {
  const env = resolveInstalled(name, undefined, { projectDir: project });
  if (!env) throw new Error(`${name} is not installed`);
  const runtime = await openEnvironment({ dir: env.dir, manifest: env.manifest, ...(env.bundlePath ? { bundlePath: env.bundlePath } : {}), dataDir: env.dataDir, maxInstances: 1 });
  try {
    const [task] = await runtime.listTasks("train");
    const session = await runtime.openEpisode();
    if (session.kind === "failed" || !task) throw new Error("no episode");
    const turn = await session.value.reset({ task, seed: 0, builtinAgents: [] });
    await session.value.close();
    if (turn.kind === "failed") throw new Error(turn.failure.message);
    return turn.value.observations["solver"]?.messages[0]?.content ?? "";
  } finally {
    await runtime.close();
  }
}

/** A registry with one tarball-sourced entry, pinned to `sha256`. */
function writeRegistry(dir: string, name: string, tarball: string, sha256: string): string {
  const file = join(dir, "registry.json");
  const entry = { description: "fixture", license: "MIT", versions: { "1.0.0": { source: { type: "tarball", url: tarball }, kind: "vm", sha256 } } };
  writeFileSync(file, JSON.stringify({ environments: { [name]: entry } }));
  return file;
}

afterAll(removeTempDirs);

describe("env store", () => {
  it("installs each environment's own dependencies: two majors of one package both work", async () => {
    const project = tempDir("deps");
    const six = await addEnvironment({ name: "dep-six", source: depSixFixture(), projectDir: project });
    const seven = await addEnvironment({ name: "dep-seven", source: join(FIXTURES, "dep-seven"), projectDir: project });
    expect(six.smoke).toMatchObject({ kind: "ok" });
    expect(seven.smoke).toMatchObject({ kind: "ok" });
    expect(await firstObservation(project, "dep-six")).toBe("is-number 6.0.0: true");
    expect(await firstObservation(project, "dep-seven")).toBe("is-number 7.0.0: true");
    expect(JSON.parse(readFileSync(join(six.dir, "node_modules", "is-number", "package.json"), "utf8")).version).toBe("6.0.0");
    expect(Object.keys(readLockfile(project).environments).sort()).toEqual(["dep-seven", "dep-six"]);
  });

  it("installing the same lock twice gives byte-identical environments", async () => {
    const project = tempDir("lock");
    await addEnvironment({ name: "dep-six", source: depSixFixture(), projectDir: project });
    const first = snapshotTree(join(project, ".agentjet"));
    const lock = readFileSync(join(project, "agentjet.lock"), "utf8");
    rmSync(join(project, ".agentjet"), { recursive: true });
    const results = await installFromLock({ projectDir: project });
    expect(results.map((r) => r.verified)).toEqual(["pinned"]);
    expect(snapshotTree(join(project, ".agentjet"))).toEqual(first);
    expect(readFileSync(join(project, "agentjet.lock"), "utf8")).toBe(lock);
    expect(Object.keys(first)).toContain("envs/dep-six/1.0.0/.agentjet-build/bundle.js");
  });

  it("refuses a tampered tarball and leaves the store as it was", async () => {
    const project = tempDir("tamper");
    await addEnvironment({ name: "dep-six", source: depSixFixture(), projectDir: project, smoke: false });
    const before = { tree: snapshotTree(project) };
    const packed = packTree(join(FIXTURES, "dep-seven"));
    const tar = Buffer.from(packed.tar);
    const at = tar.indexOf("pkg.version");
    tar.write("PKG", at);
    const tarball = join(tempDir("tgz"), "dep-seven-1.0.0.tgz");
    writeFileSync(tarball, gzipTar(tar));
    expect(gunzipSync(readFileSync(tarball)).equals(packed.tar)).toBe(false);
    const registry = writeRegistry(tempDir("reg"), "dep-seven", tarball, packed.sha256);
    await expect(addEnvironment({ name: "dep-seven", registry, projectDir: project })).rejects.toMatchObject({
      code: "AJ_ERR_STORE_INTEGRITY",
      expected: packed.sha256,
      message: expect.stringContaining("sha256 mismatch for dep-seven@1.0.0"),
    });
    expect(snapshotTree(project)).toEqual(before.tree);
  });
});

describe("env store: versions", () => {
  it("moves to the registry's newest version and drops the old one", async () => {
    const work = tempDir("versions");
    const { cpSync } = await import("node:fs");
    const v1 = join(work, "v1");
    const v2 = join(work, "v2");
    cpSync(join(FIXTURES, "dep-seven"), v1, { recursive: true });
    cpSync(join(FIXTURES, "dep-seven"), v2, { recursive: true });
    const manifestPath = join(v2, "agentjet.env.json");
    writeFileSync(manifestPath, readFileSync(manifestPath, "utf8").replace('"version": "1.0.0"', '"version": "1.1.0"'));
    const version = (dir: string) => ({ source: { type: "path", path: dir }, kind: "vm", sha256: packTree(dir).sha256 });
    const registry = join(work, "registry.json");
    writeFileSync(registry, JSON.stringify({ environments: { "dep-seven": { description: "d", license: "MIT", versions: { "1.0.0": version(v1) } } } }));
    const project = join(work, "project");
    const first = await addEnvironment({ name: "dep-seven", registry, projectDir: project, smoke: false });
    expect(first.version).toBe("1.0.0");
    writeFileSync(registry, JSON.stringify({ environments: { "dep-seven": { description: "d", license: "MIT", versions: { "1.0.0": version(v1), "1.1.0": version(v2) } } } }));
    const second = await addEnvironment({ name: "dep-seven", registry, projectDir: project, smoke: false });
    expect(second).toMatchObject({ version: "1.1.0", alreadyInstalled: false, verified: "registry" });
    expect(resolveInstalled("dep-seven", undefined, { projectDir: project })?.version).toBe("1.1.0");
    expect(Object.keys(snapshotTree(join(project, ".agentjet", "envs", "dep-seven"))).every((p) => p.startsWith("1.1.0/"))).toBe(true);
    const again = await addEnvironment({ name: "dep-seven", registry, projectDir: project, smoke: false });
    expect(again.alreadyInstalled).toBe(true);
  });
});
