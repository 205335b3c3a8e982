import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, expect, it } from "vitest";
import { describeDocker } from "../helpers/docker.ts";
import { parseJson, REPO, removeTempDirs, runCli, tempDir } from "./helpers.ts";

afterAll(removeTempDirs);

describeDocker("an environment written in Python (examples/plugins/python-env)", () => {
  it("builds on AGENTJET_PYTHON_BASE (the host's python3, FROM scratch) and passes `agentjet env test`", { timeout: 300_000 }, async () => {
    const test = await runCli(["env", "test", join(REPO, "examples", "plugins", "python-env"), "--json"], tempDir("python-env"));
    const report = parseJson(test)["report"] as { passed: boolean; checks: Array<{ name: string; status: string; detail: string }> };
    expect(report.checks.filter((c) => c.status !== "pass"), test.stderr).toEqual([]);
    expect(report.checks.map((c) => c.name)).toContain("fuzz");
    expect(test.code).toBe(0);
    // The base image has the interpreter and no shell.
    const tags = (await new Docker().listImages()).flatMap((i) => i.RepoTags ?? []);
    expect(tags.some((t) => t.startsWith("agentjet/python-base:"))).toBe(true);
    // env test removed the plugin's throwaway image.
    expect(tags).not.toContain("agentjet-env/python-sum:0.1.0");
  });
});
