import { resolve } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { registerEnvTools } from "./env-tools.ts";
import { registerEpisodeTools } from "./episode-tools.ts";
import { ProcessTable } from "./process-table.ts";
import { codeProtocolErrors } from "./register-tool.ts";
import { registerReportTools } from "./report-tools.ts";
import { registerRunTools } from "./run-tools.ts";
import { registerSweepTools } from "./sweep-tools.ts";

export interface McpServerOptions {
  /** The project the tools work in: relative paths, installed environments, `.agentjet/mcp/` (default: the working directory). */
  projectDir?: string;
  /** The server's version, as the client sees it. */
  version: string;
}

/** The `agentjet mcp` server with every tool registered, not yet connected to a transport. */
export function createMcpServer(o: McpServerOptions): McpServer {
  const projectDir = resolve(o.projectDir ?? process.cwd());
  const server = new McpServer(
    { name: "agentjet", version: o.version },
    {
      capabilities: { tools: {} },
      instructions:
        "agentjet trains LLM agents with RL. Scaffold and test environments (env_init, env_test), start and watch training runs (run_start, run_status, run_wait, run_stop) and sweeps, browse recorded episodes and failures, and read or compare reports. Every tool answers { ok, result } or, on error, { ok: false, error: { code: AJ_ERR_*, message } }.",
    },
  );
  codeProtocolErrors(server);
  const ctx = { projectDir, processes: new ProcessTable({ projectDir }) };
  registerEnvTools(server, ctx);
  registerRunTools(server, ctx);
  registerSweepTools(server, ctx);
  registerEpisodeTools(server, ctx);
  registerReportTools(server, ctx);
  return server;
}

/**
 * Serves over stdin/stdout until stdin ends. Standard output is the protocol's: anything else that would
 * print there (a library's console.log) goes to stderr instead. Runs and sweeps it started keep going.
 */
export async function serveStdio(o: McpServerOptions): Promise<void> {
  console.log = console.error;
  console.info = console.error;
  const server = createMcpServer(o);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((done) => {
    transport.onclose = () => done();
    process.stdin.once("end", () => void server.close());
    process.stdin.once("close", () => void server.close());
  });
  await server.connect(transport);
  await closed;
}
