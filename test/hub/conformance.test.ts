import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runConformance } from "../../hub/conformance/index.ts";
import { writeScaffold } from "../../hub/cli/env/scaffold.ts";
import { removeTempDirs, tempDir } from "./helpers.ts";

/** A plugin with no reference solve whose step throws on anything that is not a number. */
function writeFragilePlugin(dir: string): void {
  mkdirSync(join(dir, "src"), { recursive: true });
  writeFileSync(
    join(dir, "agentjet.env.json"),
    JSON.stringify({
      name: "fragile",
      version: "1.0.0",
      description: "fixture",
      license: "MIT",
      kind: "vm",
      entry: "src/index.js",
      agents: [{ id: "solver", role: "solver" }],
      splits: { train: { generate: 3 } },
      limits: { memoryMb: 32, callTimeoutMs: 2000 },
      reward: { min: 0, max: 1 },
    }),
  );
  writeFileSync(
    join(dir, "src", "index.js"),
    `export const environment = {
  generateTasks: ({ seed, count, split }) => Array.from({ length: count }, (_, i) => ({ id: split + "-" + seed + "-" + i, split, data: { n: i } })),
  createEpisode: () => ({
    reset: () => ({ observations: { solver: { messages: [{ role: "user", content: "say a number" }] } }, done: false }),
    step: ({ actions }) => {
      if (!/^\\d+$/.test(actions.solver ?? "")) throw new Error("not a number");
      return { observations: {}, done: true, rewards: { solver: 1 } };
    },
  }),
};
`,
  );
}

afterAll(removeTempDirs);

describe("conformance suite", () => {
  it("passes the scaffolded plugin on every check", async () => {
    const dir = join(tempDir("conf-ok"), "p");
    writeScaffold(dir, "p", "vm");
    const report = await runConformance({ dir });
    expect(report.checks.map((c) => [c.name, c.status])).toEqual([
      ["manifest", "pass"],
      ["open", "pass"],
      ["tasks", "pass"],
      ["reset-step", "pass"],
      ["solve", "pass"],
      ["malformed-action", "pass"],
      ["determinism", "pass"],
      ["crash-recovery", "pass"],
    ]);
    expect(report.passed).toBe(true);
  });

  it("skips solve for a plugin that has none and fails one that throws on a malformed action", async () => {
    const dir = tempDir("conf-bad");
    writeFragilePlugin(dir);
    const report = await runConformance({ dir });
    const status = Object.fromEntries(report.checks.map((c) => [c.name, c.status]));
    expect(status).toMatchObject({ manifest: "pass", tasks: "pass", solve: "skip", "malformed-action": "fail" });
    expect(report.checks.find((c) => c.name === "malformed-action")?.detail).toMatch(/malformed action broke the instance/);
    expect(report.passed).toBe(false);
  });

  it("names the manifest field that is wrong", async () => {
    const dir = tempDir("conf-manifest");
    writeFileSync(join(dir, "agentjet.env.json"), JSON.stringify({ name: "Bad Name", version: "1" }));
    const report = await runConformance({ dir });
    expect(report.passed).toBe(false);
    expect(report.checks[0]).toMatchObject({ name: "manifest", status: "fail", detail: expect.stringMatching(/name:.*\n.*version:/s) });
  });
});
