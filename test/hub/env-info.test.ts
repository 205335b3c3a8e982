import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeScaffold } from "../../hub/cli/env/scaffold.ts";
import { removeTempDirs, runCli, tempDir } from "./helpers.ts";

afterAll(removeTempDirs);

describe("agentjet env info", () => {
  it("describes a plugin installed from outside the registry from its manifest, in text mode", { timeout: 120_000 }, async () => {
    const work = tempDir("info");
    writeScaffold(join(work, "off-list"), "off-list", "vm");
    const project = join(work, "project");
    mkdirSync(project);
    const add = await runCli(["env", "add", "off-list", "--source", join(work, "off-list"), "--no-smoke"], project);
    expect(add.code, add.stderr).toBe(0);
    const info = await runCli(["env", "info", "off-list"], project);
    expect(info.code, info.stderr).toBe(0);
    expect(info.stdout).toContain("off-list: off-list: reverse a word");
    expect(info.stdout).toMatch(/not in the registry; licence Apache-2\.0; kind vm; content sha256 [0-9a-f]{64}/);
    expect(info.stdout).toContain("agents solver (solver); splits train, test; reward [0, 1]");
    expect(info.stdout).toContain("installed 0.1.0 at");
  });
});
