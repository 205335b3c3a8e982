import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import Docker from "dockerode";
import { describeDocker } from "../helpers/docker.ts";
import { AIME_DATA, parseJson, REPO, runCli, snapshotTree, removeTempDirs, tempDir } from "./helpers.ts";

/** init -> test -> pack -> a temporary registry -> add, all through the CLI, in a fresh project. */
async function scaffoldToInstall(kind: "vm" | "docker"): Promise<void> {
  const work = tempDir(`e2e-${kind}`);
  const name = `my-${kind}-env`;
  const init = await runCli(["env", "init", name, "--kind", kind, "--json"], work);
  expect(init.code, init.stderr).toBe(0);
  const plugin = parseJson(init)["dir"] as string;
  expect(existsSync(join(plugin, "src", "index.ts"))).toBe(true);

  const test = await runCli(["env", "test", plugin, "--json"], work);
  const report = parseJson(test)["report"] as { passed: boolean; checks: Array<{ name: string; status: string }> };
  expect(report.checks.filter((c) => c.status !== "pass"), test.stderr).toEqual([]);
  expect(test.code).toBe(0);

  const registry = join(work, "registry.json");
  const pack = parseJson(await runCli(["env", "pack", plugin, "--out", work, "--json"], work));
  const entry = pack["entry"] as Record<string, unknown>;
  writeFileSync(registry, JSON.stringify({ environments: { [name]: entry } }));

  const project = join(work, "project");
  mkdirSync(project);
  const add = await runCli(["env", "add", name, "--registry", registry, "--json"], project);
  expect(add.code, add.stderr).toBe(0);
  const installed = parseJson(add)["environment"] as Record<string, unknown>;
  expect(installed).toMatchObject({ name, version: "0.1.0", kind, verified: "registry", sha256: pack["sha256"], smoke: { kind: "ok" } });
  if (kind === "docker") expect(installed["image"]).toBe(`agentjet-env-${name}:${(pack["sha256"] as string).slice(0, 16)}`);
  expect(add.stderr).toMatch(/smoke check passed/);
  const removed = await runCli(["env", "remove", name, "--json"], project);
  expect(parseJson(removed)["removed"]).toMatchObject({ name, removed: true, ...(kind === "docker" ? { image: installed["image"] } : {}) });
  // `env test <folder>` on a docker source builds a throwaway image of its own.
  if (kind === "docker") await new Docker().getImage(`agentjet-env/${name}:0.1.0`).remove().catch(() => undefined);
}

afterAll(removeTempDirs);

describe("agentjet env (CLI)", () => {
  // Regression: --tags was ignored when the registry already had the entry.
  it("pack --write-registry: --tags sets an existing entry's tags, and a pack without --tags keeps them", async () => {
    const work = tempDir("pack-tags");
    const registry = join(work, "registry.json");
    const pack = (...extra: string[]) => runCli(["env", "pack", join(REPO, "environments", "arith"), "--out", work, "--write-registry", registry, ...extra], work);
    const tags = () => (JSON.parse(readFileSync(registry, "utf8")) as { environments: { arith: { tags: string[] } } }).environments.arith.tags;
    expect((await pack("--tags", "math")).code).toBe(0);
    expect(tags()).toEqual(["math"]);
    expect((await pack("--tags", "math,smoke")).code).toBe(0);
    expect(tags()).toEqual(["math", "smoke"]);
    expect((await pack()).code).toBe(0);
    expect(tags()).toEqual(["math", "smoke"]);
  });

  it("add aime --data, list, test, remove", async () => {
    const work = tempDir("aime");
    const registry = join(work, "registry.json");
    // A registry pinned to the aime folder as it is now, so an edit in progress does not fail this test.
    expect((await runCli(["env", "pack", join(REPO, "environments", "aime"), "--out", work, "--write-registry", registry], work)).code).toBe(0);
    const project = join(work, "project");
    mkdirSync(project);
    const add = await runCli(["env", "add", "aime", "--data", AIME_DATA, "--registry", registry, "--json"], project);
    expect(add.code, add.stderr).toBe(0);
    expect(parseJson(add)["environment"]).toMatchObject({ name: "aime", verified: "registry", smoke: { kind: "ok" } });
    expect(readFileSync(join(project, "agentjet.lock"), "utf8")).toContain(AIME_DATA);

    const list = parseJson(await runCli(["env", "list", "--registry", registry, "--json"], project));
    expect(list["installed"]).toEqual([expect.objectContaining({ name: "aime" })]);
    expect(list["available"]).toEqual([expect.objectContaining({ name: "aime", latest: "1.0.0" })]);

    const test = await runCli(["env", "test", "aime", "--json"], project);
    expect(test.code, test.stderr).toBe(0);
    expect((parseJson(test)["report"] as { passed: boolean }).passed).toBe(true);

    const remove = await runCli(["env", "remove", "aime", "--json"], project);
    expect(remove.code).toBe(0);
    expect(existsSync(join(project, ".agentjet", "envs", "aime"))).toBe(false);
    expect(JSON.parse(readFileSync(join(project, "agentjet.lock"), "utf8")).environments).toEqual({});
    expect((await runCli(["env", "remove", "aime"], project)).code).toBe(3);
  }, 300_000);

  it("installs from a tarball made by env pack, and refuses a tampered one", async () => {
    const work = tempDir("tarball");
    const plugin = join(REPO, "test", "hub", "fixtures", "dep-seven");
    const pack = parseJson(await runCli(["env", "pack", plugin, "--out", work, "--json"], work));
    const tarball = pack["tarball"] as string;
    const tampered = join(work, "tampered.tgz");
    const tar = gunzipSync(readFileSync(tarball));
    tar.write("PKG", tar.indexOf("pkg.version"));
    writeFileSync(tampered, gzipSync(tar));
    const registry = join(work, "registry.json");
    const entry = pack["entry"] as { versions: Record<string, { source: unknown }> };
    writeFileSync(registry, JSON.stringify({ environments: { "dep-seven": entry } }));

    const project = join(work, "project");
    mkdirSync(project);
    const refused = await runCli(["env", "add", "dep-seven", "--source", tampered, "--registry", registry, "--json"], project);
    expect(refused.code).toBe(4);
    expect(parseJson(refused)).toMatchObject({ ok: false, error: { code: "AJ_ERR_STORE_INTEGRITY" } });
    expect(refused.stderr).toMatch(/sha256 mismatch for dep-seven@1\.0\.0.*nothing was installed/);
    // The real hash is not offered for copy-paste: the message says where a trusted hash comes from.
    expect(refused.stderr).not.toMatch(/hashes to [0-9a-f]{64}/);
    expect(refused.stderr).toContain("take it from `agentjet env pack` on the source you reviewed");
    expect(snapshotTree(project)).toEqual({});

    // A malformed --sha256 is a usage error, not a mismatch.
    const malformed = await runCli(["env", "add", "dep-seven", "--source", tarball, "--sha256", "xyz", "--json"], project);
    expect(malformed.code).toBe(2);
    expect(parseJson(malformed)).toMatchObject({ ok: false, error: { code: "AJ_ERR_USAGE" } });

    // Either hash form is accepted, and the output names which one matched.
    const fileSha = createHash("sha256").update(readFileSync(tarball)).digest("hex");
    expect(pack["tarballSha256"]).toBe(fileSha);
    const byFile = await runCli(["env", "add", "dep-seven", "--source", tarball, "--sha256", fileSha, "--no-smoke", "--json"], project);
    expect(byFile.code, byFile.stderr).toBe(0);
    expect(parseJson(byFile)["environment"]).toMatchObject({ verified: "pinned", matched: "tarball-file", sha256: pack["sha256"] });
    expect(JSON.parse(readFileSync(join(project, "agentjet.lock"), "utf8")).environments["dep-seven"].sha256).toBe(pack["sha256"]);
    expect((await runCli(["env", "remove", "dep-seven"], project)).code).toBe(0);

    const add = await runCli(["env", "add", "dep-seven", "--source", tarball, "--registry", registry, "--json"], project);
    expect(add.code, add.stderr).toBe(0);
    expect(parseJson(add)["environment"]).toMatchObject({ verified: "registry", matched: "content", sha256: pack["sha256"] });
    const text = await runCli(["env", "pack", plugin, "--out", work], work);
    expect(text.stdout).toMatch(/content sha256 [0-9a-f]{64} {2}\(of the canonical uncompressed tar; what registry\.json and --sha256 pin\)/);
    expect(text.stdout).toContain(`tarball sha256 ${fileSha}`);
    const missing = await runCli(["env", "add", "dep-seven", "--source", join(work, "nope-1.0.0.tgz")], project);
    expect(missing.stderr).toContain(`tarball ${join(work, "nope-1.0.0.tgz")} does not exist`);
    expect(missing.code).toBe(3); // "3 not found", as env add --help says (it was 1)
  }, 240_000);

  it("answers --help and usage errors with the documented exit codes", async () => {
    const cwd = tempDir("help");
    const help = await runCli(["env", "add", "--help"], cwd);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^agentjet env add <name>\[@version\]/);
    expect((await runCli(["env", "frobnicate"], cwd)).code).toBe(2);
    expect((await runCli(["env", "add", "--bogus-flag", "x"], cwd)).code).toBe(2);
    const missing = await runCli(["env", "add", "no-such-env", "--json"], cwd);
    expect(missing.code).toBe(3);
    expect(parseJson(missing)).toMatchObject({ ok: false, error: { code: "AJ_ERR_ENV_NOT_FOUND" } });
  }, 180_000);

  it("scaffolds a vm plugin that passes env test, packs, and installs from a registry", async () => {
    await scaffoldToInstall("vm");
  }, 300_000);
});

describeDocker("agentjet env (CLI, docker)", () => {
  it("scaffolds a docker plugin that passes env test, packs, and installs from a registry", async () => {
    await scaffoldToInstall("docker");
  }, 300_000);
});
