import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { expect } from "vitest";
import { REPO, removeTempDirs, tempDir } from "../helpers.ts";

/** A tiny arith run: 10 warm-start steps, 2 RL steps of 4 groups of 4, 8 greedy eval tasks (seconds on a free core). */
export const TINY_CONFIG = {
  run: { dir: "runs/tiny", seed: 1, steps: 2, checkpointEvery: 2 },
  policies: { main: { tokenizer: "embedded", engine: { kind: "embedded", model: { layers: 1, dim: 16, heads: 2, context: 64, seed: 1 } }, optimizer: { lr: 0.0003, epochs: 1 } } },
  environments: [{ name: "arith", split: "train", roles: { solver: "main" } }],
  warmStart: { source: "solver", split: "train", steps: 10, batch: 8, lr: 0.003, logEvery: 5 },
  sampling: { temperature: 1, maxTokens: 3 },
  batching: { strategy: "tasks", batchTasks: 4, groupSize: 4 },
  clients: { local: 1, concurrency: 16 },
  eval: { every: 2, split: "test", tasks: 8, modes: ["greedy"] },
};

export interface Envelope<T> {
  ok: boolean;
  result?: T;
  error?: { code: string; message: string; details?: unknown };
}

/** `agentjet mcp --project <project>` (the real CLI) driven by the SDK's own client over stdio. */
export interface McpSession {
  client: Client;
  /** The server's stderr so far (for failure messages). */
  stderr(): string;
  ok<T = Record<string, unknown>>(name: string, args: Record<string, unknown>): Promise<T>;
  /** Calls a tool that must fail; gives its AJ_ERR_* code. */
  fails(name: string, args: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export async function startMcp(project: string): Promise<McpSession> {
  let stderr = "";
  const transport = new StdioClientTransport({ command: process.execPath, args: [join(REPO, "bin", "agentjet.js"), "mcp", "--project", project], cwd: project, stderr: "pipe" });
  transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: "agentjet-test", version: "0.0.0" });
  await client.connect(transport);
  const call = async <T>(name: string, args: Record<string, unknown>): Promise<{ raw: CallToolResult; env: Envelope<T> }> => {
    const raw = (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult;
    return { raw, env: raw.structuredContent as unknown as Envelope<T> };
  };
  return {
    client,
    stderr: () => stderr,
    async ok<T>(name: string, args: Record<string, unknown>): Promise<T> {
      const { raw, env } = await call<T>(name, args);
      expect(raw.isError, `${name}: ${JSON.stringify(env.error)}\n${stderr.slice(-2000)}`).toBeFalsy();
      expect(env.ok).toBe(true);
      return env.result!;
    },
    async fails(name, args) {
      const { raw, env } = await call(name, args);
      expect(raw.isError, `${name} answered ${JSON.stringify(env)}`).toBe(true);
      expect(env.ok).toBe(false);
      return env.error!.code;
    },
    close: () => client.close(),
  };
}

/** A fresh project folder (named from `prefix`) and an MCP server over it: a test file's `beforeAll`. */
export async function openMcpProject(prefix: string): Promise<{ mcp: McpSession; project: string }> {
  const project = tempDir(prefix);
  return { mcp: await startMcp(project), project };
}

/** Its `afterAll`: closes the server, stops the runs it left and removes the file's temp folders. */
export async function closeMcpProject(mcp: McpSession | undefined, project: string): Promise<void> {
  await mcp?.close();
  stopLeftovers(project);
  removeTempDirs();
}

/** Polls `read` every `ms` until `done` holds or `timeoutMs` passes; gives the last value. */
export async function pollUntil<T>(read: () => Promise<T>, done: (v: T) => boolean, timeoutMs: number, ms = 500): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let v = await read();
  while (!done(v) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, ms));
    v = await read();
  }
  return v;
}

/** Stops (SIGTERM: a clean stop) every run or sweep the server started in `project` that still lives, so a failed test leaves no training behind. */
export function stopLeftovers(project: string): void {
  const root = join(project, ".agentjet", "mcp");
  if (!existsSync(root)) return;
  for (const id of readdirSync(root)) {
    const file = join(root, id, "process.json");
    if (!existsSync(file)) continue;
    const { pid, exit } = JSON.parse(readFileSync(file, "utf8")) as { pid: number; exit?: unknown };
    // An exit the server saw: the pid may belong to another process by now.
    if (exit !== undefined) continue;
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // Already ended.
    }
  }
}
