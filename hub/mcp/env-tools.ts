import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { runInit } from "../cli/env/init.ts";
import type { EnvIo } from "../cli/env/io.ts";
import { testEnvironment } from "../cli/env/test.ts";
import { MANIFEST_FILE } from "../store/read-manifest.ts";
import { registerTool } from "./register-tool.ts";
import type { ToolContext } from "./tool-context.ts";

const InitResult = z.object({ name: z.string(), kind: z.enum(["vm", "docker"]), dir: z.string(), files: z.array(z.string()) });

const TestResult = z.object({
  name: z.string(),
  version: z.string(),
  kind: z.enum(["vm", "docker"]),
  passed: z.boolean().describe("No check failed (skips do not fail the suite)"),
  checks: z.array(z.object({ name: z.string(), status: z.enum(["pass", "fail", "skip"]), detail: z.string(), seconds: z.number() })),
});

/** `env init`'s own code with its output captured: stdout is this server's protocol channel. */
async function initEnvironment(args: string[]): Promise<z.input<typeof InitResult>> {
  let result: Record<string, unknown> | undefined;
  const io: EnvIo = { json: true, progress: (line) => process.stderr.write(`${line}\n`), result: (data) => (result = data) };
  await runInit(args, io);
  return InitResult.parse(result);
}

export function registerEnvTools(server: McpServer, ctx: ToolContext): void {
  registerTool(server, {
    name: "env_init",
    title: "Scaffold an environment plugin",
    description:
      "Scaffolds a new environment plugin, as `agentjet env init`: agentjet.env.json, a typed entry (src/index.ts with a reference solve()), a tiny dataset, a test, and for docker a Dockerfile. Then env_test it. Fails with AJ_ERR_SCAFFOLD_DIR_NOT_EMPTY when the folder exists and is not empty.",
    input: z.object({
      name: z.string().describe("Environment name: lower-case letters, digits and '-', starting with a letter"),
      kind: z.enum(["vm", "docker"]).default("vm").describe("The sandbox it runs in"),
      dir: z.string().optional().describe("Where to write it, relative to the project (default: ./<name>)"),
    }),
    result: InitResult,
    run: (a) => initEnvironment([a.name, "--kind", a.kind, "--dir", resolve(ctx.projectDir, a.dir ?? a.name)]),
  });
  registerTool(server, {
    name: "env_test",
    title: "Run the conformance suite",
    description:
      "Runs the conformance suite (`agentjet env test`) on a plugin folder or an installed environment by name: manifest, open, tasks, reset-step, solve, malformed-action, fuzz, determinism, crash-recovery. Returns every check with its status and detail; passed is false when one failed.",
    input: z.object({
      target: z.string().describe("A plugin folder (relative to the project) or an installed environment's name"),
      tasks: z.number().int().min(1).max(100).optional().describe("Sample tasks per split (default 3)"),
      image: z.string().optional().describe("docker: test this image instead of building one"),
      mounts: z.record(z.string(), z.string()).optional().describe("docker: host folders for named mounts"),
    }),
    result: TestResult,
    annotations: { readOnlyHint: true },
    run: (a) => {
      const folder = resolve(ctx.projectDir, a.target);
      const log = (line: string): void => void process.stderr.write(`${line}\n`);
      // A folder of the project when it holds a manifest; else the name of an installed environment.
      return testEnvironment(existsSync(join(folder, MANIFEST_FILE)) ? folder : a.target, {
        ...(a.tasks ? { tasks: a.tasks } : {}),
        ...(a.image ? { image: a.image } : {}),
        ...(a.mounts ? { mounts: a.mounts } : {}),
        project: ctx.projectDir,
        onCheck: log,
        onNote: log,
      });
    },
  });
}
