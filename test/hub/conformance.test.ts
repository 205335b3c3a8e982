import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runConformance } from "../../hub/conformance/index.ts";
import { writeScaffold } from "../../hub/cli/env/scaffold.ts";
import { describeDocker } from "../helpers/docker.ts";
import { vmManifest } from "../helpers/vm-manifest.ts";
import { removeTempDirs, tempDir } from "./helpers.ts";

/** A vm plugin whose step is `stepBody` (JavaScript with `actions` in scope), with a solve that wins. */
function writeStepPlugin(dir: string, name: string, stepBody: string, limits = { memoryMb: 32, callTimeoutMs: 1500 }): void {
  mkdirSync(join(dir, "src"), { recursive: true });
  writeFileSync(
    join(dir, "agentjet.env.json"),
    JSON.stringify(vmManifest({ name, entry: "src/index.js", splits: { train: { generate: 2 } }, limits })),
  );
  writeFileSync(
    join(dir, "src", "index.js"),
    `export const environment = {
  generateTasks: ({ count, split }) => Array.from({ length: count }, (_, i) => ({ id: split + "-" + i, split, data: {} })),
  createEpisode: () => ({
    reset: () => ({ observations: { solver: { messages: [{ role: "user", content: "say ok" }] } }, done: false }),
    step: ({ actions }) => { ${stepBody} },
  }),
  solve: () => "ok",
};
`,
  );
}

/** A plugin with no reference solve whose step throws on anything that is not a number. */
function writeFragilePlugin(dir: string): void {
  mkdirSync(join(dir, "src"), { recursive: true });
  writeFileSync(
    join(dir, "agentjet.env.json"),
    JSON.stringify(vmManifest({ name: "fragile", entry: "src/index.js", splits: { train: { generate: 3 } }, limits: { memoryMb: 32, callTimeoutMs: 2000 } })),
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
      ["fuzz", "pass"],
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

  it("fuzz plays adversarial actions the reference agent never sends, and fails a step that breaks on one", async () => {
    const dir = tempDir("conf-fuzz");
    // Like a plugin that shells out on some inputs: fine on "ok" and on the malformed check's garbage, broken on JSON-looking text.
    writeStepPlugin(dir, "json-fragile", 'if (actions.solver.trimStart().startsWith("{")) JSON.parse("{" + actions.solver); return { observations: {}, done: true, rewards: { solver: actions.solver === "ok" ? 1 : 0 } };');
    const report = await runConformance({ dir });
    const status = Object.fromEntries(report.checks.map((c) => [c.name, c.status]));
    expect(status).toMatchObject({ solve: "pass", "malformed-action": "pass", fuzz: "fail" });
    expect(report.checks.find((c) => c.name === "fuzz")?.detail).toMatch(/after the action "\{\\"answer\\": 42.*step failed \(crash|protocol\)/);
  });

  it("a step that never ends names limits.callTimeoutMs and its value, not the malformed-action advice", async () => {
    const dir = tempDir("conf-hang");
    writeStepPlugin(dir, "hangs", 'if (actions.solver !== "ok") for (;;) {} return { observations: {}, done: true, rewards: { solver: 1 } };');
    const report = await runConformance({ dir });
    const detail = report.checks.find((c) => c.name === "malformed-action")?.detail ?? "";
    expect(detail).toContain("did not finish within limits.callTimeoutMs (1500 ms)");
    expect(detail).toContain("raise limits.callTimeoutMs in agentjet.env.json");
    expect(detail).not.toContain("answer it with an observation");
  });

  // Issue 22, item 5: "Promise was abandoned" and an out-of-memory isolate said nothing about what to change.
  it("a promise that never settles names limits.callTimeoutMs; running out of memory names limits.memoryMb", async () => {
    const never = tempDir("conf-never");
    writeStepPlugin(never, "never-settles", 'if (actions.solver !== "ok") return new Promise(() => {}); return { observations: {}, done: true, rewards: { solver: 1 } };');
    const hang = (await runConformance({ dir: never })).checks.find((c) => c.name === "malformed-action")?.detail ?? "";
    expect(hang).toContain("did not finish within limits.callTimeoutMs (1500 ms)");
    expect(hang).not.toContain("answer it with an observation");

    const hungry = tempDir("conf-oom");
    writeStepPlugin(hungry, "hungry", 'if (actions.solver !== "ok") { const a = []; for (;;) a.push(new Array(1e6).fill(1)); } return { observations: {}, done: true, rewards: { solver: 1 } };');
    const oom = (await runConformance({ dir: hungry })).checks.find((c) => c.name === "malformed-action")?.detail ?? "";
    expect(oom).toContain("used more than limits.memoryMb (32 MiB)");
    expect(oom).toContain("raise limits.memoryMb in agentjet.env.json");
  });

  it("a folder whose manifest cannot be read is reported under the folder's name", async () => {
    const dir = join(tempDir("conf-noname"), "my-broken-env");
    mkdirSync(dir);
    writeFileSync(join(dir, "agentjet.env.json"), "{ not json");
    expect(await runConformance({ dir })).toMatchObject({ name: "my-broken-env", version: "", passed: false });
  });
});

describeDocker("conformance suite (docker)", () => {
  it("a RUN line on the shell-less base image says so and shows the COPY-only pattern", async () => {
    const dir = join(tempDir("conf-run"), "p");
    writeScaffold(dir, "run-line", "docker");
    writeFileSync(join(dir, "Dockerfile"), "ARG AGENTJET_NODE_BASE\nFROM ${AGENTJET_NODE_BASE}\nRUN echo hi\nCOPY agentjet/entry.mjs /app/entry.mjs\nCMD [\"/app/entry.mjs\"]\n");
    const report = await runConformance({ dir });
    const open = report.checks.find((c) => c.name === "open");
    expect(open?.status).toBe("fail");
    expect(open?.detail).toContain("have no shell, so a RUN line cannot run");
    expect(open?.detail).toContain("docker.image");
  }, 180_000);
});
