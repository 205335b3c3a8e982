import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildReport, skippedLinesWarning } from "../../report/build-report.ts";
import { type Command, EXIT, exitCodeFor } from "../command.ts";

export const command: Command = {
  name: "report",
  summary: "Regenerate report.html and the plots of a run directory",
  help: `Usage: agentjet report <run-dir> [--json]

Reads <run-dir>/metrics.jsonl and writes <run-dir>/report.html and <run-dir>/plots/*.svg:
reward and success curves per environment and per policy, evaluation results, token savings
from timeline merging, and infrastructure failures over time.

Options:
  --json    Print the summary as one JSON object
  --help    Show this help

Exit codes: 0 written, 2 usage, 3 not a run directory. With --json an error prints
{"ok":false,"error":{"code":"AJ_ERR_...","message":"..."}} on standard output.`,
  async run(argv) {
    const json = argv.includes("--json");
    const fail = (code: string, message: string): number => {
      console.error(`agentjet report: ${message}`);
      if (json) console.log(JSON.stringify({ ok: false, error: { code, message: message.split("\n\n")[0] } }));
      return exitCodeFor(code);
    };
    let parsed;
    try {
      parsed = parseArgs({ args: argv, options: { json: { type: "boolean", default: false } }, allowPositionals: true });
    } catch (err) {
      return fail("AJ_ERR_USAGE", `${(err as Error).message}\n\n${this.help}`);
    }
    const { values, positionals } = parsed;
    const [dir, ...extra] = positionals;
    if (!dir) return fail("AJ_ERR_USAGE", `missing <run-dir>\n\n${this.help}`);
    if (extra.length > 0) return fail("AJ_ERR_USAGE", `one <run-dir> at a time, got ${positionals.map((p) => `'${p}'`).join(", ")}\n\n${this.help}`);
    if (!existsSync(join(dir, "metrics.jsonl"))) {
      return fail("AJ_ERR_REPORT_NOT_A_RUN_DIR", `${join(dir, "metrics.jsonl")} not found: is ${dir} a run directory?`);
    }
    const summary = await buildReport(dir);
    if (values.json) console.log(JSON.stringify(summary));
    else {
      console.log(`report: ${summary.steps} steps`);
      if (summary.skippedLines.length > 0) console.log(`  warning: ${skippedLinesWarning(summary.skippedLines)}`);
      for (const line of summary.skill.headline) console.log(`  ${line}`);
      for (const warning of summary.skill.warnings) console.log(`  warning: ${warning}`);
      for (const [env, r] of Object.entries(summary.rewardLast))
        console.log(`  ${env}: mean (shaped) reward of training episodes ${(summary.rewardFirst[env] ?? 0).toFixed(3)} -> ${r.toFixed(3)}`);
      console.log(`  wrote ${join(dir, "report.html")}`);
    }
    return EXIT.ok;
  },
};
