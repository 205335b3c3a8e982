import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { serveStdio } from "../../mcp/server.ts";
import { EXIT, flagCommand } from "../command.ts";

const HELP = `Usage: agentjet mcp [--project <dir>]

A Model Context Protocol server over stdio for coding agents: tools with typed inputs and outputs to
scaffold and test environments, start, watch and stop training runs and sweeps, browse recorded
episodes and failures, and read and compare reports (hub/mcp/README.md lists them).

  env_init, env_test                    scaffold an environment; run the conformance suite
  run_start, run_status, run_wait,      a training run as a detached \`agentjet train --json\` child;
  run_stop                              state, step, last metrics, latest eval; a clean stop (exit 130)
  sweep_start, sweep_status, sweep_stop a campaign of runs (\`agentjet sweep\`)
  episodes_query, episode_show,         a run's run.db, read-only and paged
  failures_list
  report_read, report_compare           the report summary (as \`agentjet report --json\`); runs side by side

Every tool answers {"ok":true,"result":{...}} as structured content, or with isError
{"ok":false,"error":{"code":"AJ_ERR_...","message":"..."}}. Runs and sweeps outlive the server: their
records are in <project>/.agentjet/mcp/<id>/, and the status tools take an id or a directory.

Register it with a coding agent, from the project folder:
  claude mcp add agentjet -- npx agentjet mcp
or in the project's .mcp.json:
  { "mcpServers": { "agentjet": { "command": "npx", "args": ["agentjet", "mcp"] } } }

Options:
  --project <dir>  The project the tools work in (relative paths, installed environments, records).
                   Default: the working directory.
  --help           Show this help.

Exit codes: 0 the client closed the connection, 2 usage.`;

export const command = flagCommand({ project: { type: "string" } }, {
  name: "mcp",
  summary: "A Model Context Protocol server (stdio) with typed tools for coding agents",
  help: HELP,
  async run(values) {
    // a project that is not there: every tool would fail later, each with a message about something else
    if (values.project !== undefined && !statSync(values.project, { throwIfNoEntry: false })?.isDirectory()) {
      console.error(`agentjet mcp: --project '${values.project}' is not a directory`);
      return EXIT.usage;
    }
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, "..", "..", "..", "package.json"), "utf8")) as { version: string };
    await serveStdio({ version: pkg.version, ...(values.project !== undefined ? { projectDir: values.project } : {}) });
    return EXIT.ok;
  },
});
