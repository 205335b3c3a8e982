import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { AgentJetError } from "../../../errors/index.ts";
import { formatConfigIssues, loadRunConfig, type RunConfig, RunConfigSchema, WarmStartSchema } from "../../../server/config/index.ts";
import { TrainError, UnknownExampleError } from "../../train/errors.ts";
import { createProgress, type ProgressMode } from "../../train/progress.ts";
import { runTraining } from "../../train/run-training.ts";
import { type Command, EXIT, exitCodeFor, parseIntFlag } from "../command.ts";
import { onInterrupt } from "../interrupt.ts";

const EXAMPLES_DIR = join(import.meta.dirname, "..", "..", "..", "examples");

function listExamples(): string[] {
  return existsSync(EXAMPLES_DIR) ? readdirSync(EXAMPLES_DIR).filter((f) => f.endsWith(".yaml")).map((f) => f.slice(0, -5)).sort() : [];
}

const HELP = `Usage: agentjet train <config.yaml> [options]
       agentjet train --example <name> [options]
       agentjet train --resume <run-dir> [options]

Runs a training job in one process: the swarm server (OpenAI-compatible API, call recording), the
scheduler, the training coordinator and local swarm clients. Environments the config names that are not
installed in this project are installed first (agentjet env add). The embedded CPU engine is the default.
It runs until every policy has trained run.steps steps, evaluating every eval.every steps and writing a
checkpoint every run.checkpointEvery steps.

The run directory (run.dir, or --run-dir) gets config.yaml, run.db (every call, the sample pool),
metrics.jsonl (one JSON event per line), checkpoints/ and report.html with plots/*.svg at the end
(agentjet report <run-dir> rebuilds it).

Ctrl-C stops cleanly: in-flight episodes are aborted (finished ones stay in run.db), a checkpoint is
written, and --resume <run-dir> continues with the same scheduler state and weight versions. A second
Ctrl-C exits at once. From a script, signal the process group (kill -INT -<pgid>) or run
node_modules/.bin/agentjet: \`npx\` runs the command through a shell that does not pass on a SIGINT
sent to npx's own pid.

Options:
  --example <name>   Run a shipped config (examples/<name>.yaml): ${listExamples().join(", ") || "(none found)"}.
  --resume <dir>     Continue the run in <dir> from its newest checkpoint (reads <dir>/config.yaml); a
                     run killed before its first checkpoint starts again from step 0, and a run that
                     already trained its steps trains nothing more (raise them with --steps).
  --run-dir <dir>    Run directory. Default: the config's run.dir.
  --steps <n>        Override run.steps (with --resume: train on to n steps).
  --from <dir>       Start every policy from this checkpoint's weights (run.init): a run directory (its
                     newest checkpoint), a checkpoint folder or a policy folder. Version 0, fresh optimizer.
  --warm-start <n>   Override warmStart.steps (supervised steps before RL); 0 skips the warm-start. A
                     config without warmStart gets its defaults (agentjet config docs): the reference
                     solver's answers on the train split.
  --deterministic    Deterministic mode (run.deterministic): the same config and seed train the same
                     episodes in the same batches and end with the same weights (bit for bit on the
                     embedded engine). One batch at a time; slower. Not with any-client/all-clients.
  --port <n>         Server port; 0 picks a free one. Default: the config's server.port (8700).
  --json             One JSON line per event on standard output (the metrics.jsonl events).
  --no-report        Do not write report.html at the end.
  --help             Show this help.

Output: a live status line on a terminal, plain log lines otherwise, JSON lines with --json. The
dashboard's link is printed at start (http://127.0.0.1:<port>/dashboard#code=..., a one-time code:
the run, curves, clients, failures and an episode browser, live); GET /metrics serves Prometheus text
(client token).
Exit codes: 0 done, 1 failed, 2 usage or invalid config, 3 file not found, 130 interrupted. With --json
an error also prints {"ok":false,"error":{"code":"AJ_ERR_...","message":"..."}} as a line on standard output.

Examples:
  agentjet train --example quickstart
  agentjet train examples/cpu-cocktail.yaml --run-dir runs/cocktail-1
  agentjet train --resume runs/quickstart
  agentjet train --example quickstart --deterministic --run-dir runs/det-1
  agentjet config docs        # every run config field`;

/**
 * An error's message on stderr (`withCode`: followed by its code) and, with --json, `{ ok: false, error }`
 * on stdout; gives the code's exit code.
 */
function fail(json: boolean, code: string, message: string, withCode = false): number {
  console.error(`agentjet train: ${message}${withCode ? ` (${code})` : ""}`);
  if (json) process.stdout.write(`${JSON.stringify({ ok: false, error: { code, message: message.split("\n\n")[0] } })}\n`);
  return exitCodeFor(code);
}

interface Parsed {
  config: RunConfig;
  runDir: string;
  resume: boolean;
  port?: number;
  mode: ProgressMode;
  report: boolean;
}

async function parse(argv: string[]): Promise<Parsed | number> {
  const json = argv.includes("--json");
  let values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        example: { type: "string" },
        resume: { type: "string" },
        "run-dir": { type: "string" },
        steps: { type: "string" },
        from: { type: "string" },
        "warm-start": { type: "string" },
        port: { type: "string" },
        json: { type: "boolean", default: false },
        deterministic: { type: "boolean", default: false },
        "no-report": { type: "boolean", default: false },
      },
      strict: true,
    }));
  } catch (err) {
    return fail(json, "AJ_ERR_USAGE", `${(err as Error).message}\n\n${HELP}`);
  }
  const sources = [positionals.length > 0, values.example !== undefined, values.resume !== undefined].filter(Boolean).length;
  if (sources !== 1 || positionals.length > 1) {
    return fail(json, "AJ_ERR_USAGE", `give exactly one of <config.yaml>, --example <name> or --resume <run-dir>\n\n${HELP}`);
  }
  const int = (flag: string, v: string | undefined, min: number, max: number): number | undefined | null => {
    if (v === undefined) return undefined;
    const n = parseIntFlag(flag, v, min, max);
    if (n.ok) return n.value;
    fail(json, "AJ_ERR_USAGE", n.message);
    return null;
  };
  const port = int("port", values.port, 0, 65535);
  const steps = int("steps", values.steps, 1, 1_000_000);
  const warmSteps = int("warm-start", values["warm-start"], 0, 1_000_000);
  if (port === null || steps === null || warmSteps === null) return EXIT.usage;
  if (values.resume !== undefined && (values.from !== undefined || warmSteps !== undefined)) {
    return fail(json, "AJ_ERR_USAGE", "--from and --warm-start start a run; a resumed run continues from its own checkpoint");
  }

  let path: string;
  if (values.resume !== undefined) path = join(values.resume, "config.yaml");
  else if (values.example !== undefined) {
    if (!listExamples().includes(values.example)) {
      const err = new UnknownExampleError(values.example, listExamples());
      return fail(json, err.code, err.message);
    }
    path = join(EXAMPLES_DIR, `${values.example}.yaml`);
  } else path = positionals[0]!;
  const loaded = await loadRunConfig(path);
  if (loaded.kind !== "ok") {
    const what = loaded.kind === "invalid" ? "invalid run config" : values.resume !== undefined ? `'${values.resume}' is not a run directory` : "cannot read the run config";
    const code = loaded.kind === "unreadable" ? "AJ_ERR_CONFIG_UNREADABLE" : "AJ_ERR_INVALID_CONFIG";
    return fail(json, code, `${what}\n${formatConfigIssues(loaded)}`);
  }
  const config = loaded.config;
  if (steps !== undefined) config.run.steps = steps;
  if (values.from !== undefined) config.run.init = resolve(values.from);
  // A config without a warmStart section gets the section's defaults (the reference solver on the train split).
  if (warmSteps !== undefined && config.warmStart) config.warmStart.steps = warmSteps;
  else if (warmSteps !== undefined && warmSteps > 0) config.warmStart = WarmStartSchema.parse({ steps: warmSteps });
  if (values.deterministic) {
    config.run.deterministic = true;
    const checked = RunConfigSchema.safeParse(config);
    if (!checked.success) {
      return fail(json, "AJ_ERR_INVALID_CONFIG", `--deterministic: ${checked.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
    }
  }
  const runDir = values.resume ?? values["run-dir"] ?? config.run.dir;
  return {
    config,
    runDir,
    resume: values.resume !== undefined,
    ...(port !== undefined ? { port } : {}),
    mode: values.json ? "json" : process.stdout.isTTY ? "tty" : "plain",
    report: !values["no-report"],
  };
}

export const command: Command = {
  name: "train",
  summary: "Run a training job: server, scheduler, local clients, checkpoints and a report",
  help: HELP,
  async run(argv) {
    const parsed = await parse(argv);
    if (typeof parsed === "number") return parsed;
    const controller = new AbortController();
    const stopListening = onInterrupt(
      () => {
        process.stderr.write("\nagentjet train: stopping cleanly (aborting in-flight episodes, writing a checkpoint); Ctrl-C again to exit at once\n");
        controller.abort();
      },
      () => process.exit(EXIT.interrupted),
    );
    try {
      const result = await runTraining({
        config: parsed.config,
        runDir: parsed.runDir,
        resume: parsed.resume,
        projectDir: process.cwd(),
        ...(parsed.port !== undefined ? { port: parsed.port } : {}),
        progress: createProgress(parsed.mode, parsed.config.run.steps),
        signal: controller.signal,
        report: parsed.report,
        onDashboard: (url) => process.stderr.write(`agentjet train: dashboard at ${url}\n`),
      });
      if (result.reason === "interrupted") {
        process.stderr.write(`agentjet train: stopped at step ${result.step}; continue with: agentjet train --resume ${resolve(parsed.runDir)}\n`);
        return EXIT.interrupted;
      }
      return result.reason === "done" ? EXIT.ok : EXIT.failure;
    } catch (err) {
      const json = parsed.mode === "json";
      // A coded error (a TrainError, or one from the run's assembly such as a role the config does not
      // map) is the user's to fix: its message, not a stack trace.
      if (err instanceof TrainError || err instanceof AgentJetError) return fail(json, err.code, err.message, true);
      if ((err as NodeJS.ErrnoException).code === "EADDRINUSE") {
        return fail(json, "AJ_ERR_TRAIN_PORT_IN_USE", `the server port is in use (${(err as Error).message}); pick another with --port, or --port 0 for a free one`);
      }
      throw err;
    } finally {
      stopListening();
    }
  },
};
