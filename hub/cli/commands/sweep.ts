import { existsSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { campaignPath, createCampaign, readCampaign } from "../../sweep/campaign.ts";
import { CampaignExistsError, SweepError } from "../../sweep/errors.ts";
import type { FinalMetrics, SweepEvent, SweepEventInput, SweepSummary } from "../../sweep/events.ts";
import { expandSweep, formatValue } from "../../sweep/expand.ts";
import { runSweep, type SweepResult } from "../../sweep/run-sweep.ts";
import { loadSweepFile } from "../../sweep/sweep-file.ts";
import { buildSweepReport } from "../../sweep/sweep-report.ts";
import { type Command, EXIT, exitCodeFor, parseIntFlag } from "../command.ts";
import { onInterrupt } from "../interrupt.ts";

const HELP = `Usage: agentjet sweep <sweep.yaml> [options]
       agentjet sweep --resume <campaign-dir> [options]
       agentjet sweep report <campaign-dir> [--json]

Runs a hyperparameter sweep: a base run config and a grid or random search over any run config
fields, each config once per seed. Every run is a real training run, a child process
(agentjet train <config> --run-dir <campaign-dir>/runs/<id> --json), N at a time; a run that fails
is recorded and the others go on. At the end it writes a comparison report.

The sweep file (YAML; paths relative to it):
  name: lr-groups                        # names the campaign directory: sweeps/<name>
  base: ../examples/quickstart.yaml      # the base run config; or config: { ...inline run config... }
  search: grid                           # grid: every combination; random: samples draws (seed: S)
  parameters:                            # field path -> values (any field of agentjet config docs)
    policies.main.optimizer.lr: [1e-4, 3e-4]
    batching.groupSize: [4, 8]
    environments[arith].weight: [1, 2]   # a list element by name, or by index: environments[0]
  seeds: [1, 2]                          # each config once per seed: run.seed and embedded models' seed
  parallel: 2                            # runs at a time (--parallel overrides)
  overrides: { run.steps: 10 }           # set in every run first; an object value merges into the field
Random search: search: random, samples: N, seed: S; a parameter is a list (a uniform pick) or
{ min, max, log: true, int: true } (uniform, or log-uniform with log; rounded with int). Field paths
are checked against the run config schema and every expanded config is validated before anything
runs: an unknown field, an empty list or an invalid config is a usage error naming the field.
Every run listens on a free port (server.port 0) unless the sweep sets one.

The campaign directory holds campaign.json (every run: id, params, seed, status pending, running,
done, failed or interrupted, exit code, run directory; rewritten atomically on every change),
configs/<id>.yaml, runs/<id>/ (each a run directory), logs/<id>.log (each run's output), and at the
end report.html (overlaid curves, one line per run; final metrics per config, mean and spread over
its seeds, best config first), plots/*.svg and summary.json.

--resume continues an interrupted or killed sweep: done runs are kept and never run again; runs that
were running continue from their checkpoint (agentjet train --resume), or start again from an emptied
run directory when they have none; pending runs start. Failed runs stay failed unless --retry-failed.

Ctrl-C stops cleanly: no new run starts, running ones checkpoint and stop (exit 130) and are marked
interrupted; the sweep exits 130 and --resume continues it. A second Ctrl-C stops the runs at once.

Options:
  --campaign-dir <dir>  Campaign directory. Default: sweeps/<name>.
  --parallel <n>        Runs at a time. Default: the sweep file's parallel (1); with --resume, the campaign's.
  --resume <dir>        Continue the campaign in <dir> (reads its campaign.json, not the sweep file).
  --retry-failed        With --resume: start failed runs again.
  --dry-run             Expand and validate the sweep, print its runs, write nothing.
  --json                One JSON line per event on standard output: sweep-start, run-start, run-end,
                        sweep-end (with the summary), log; errors as {"event":"error","code":"AJ_ERR_..."}.
  --help                Show this help.

Exit codes: 0 every run done, 1 a run failed (or the sweep could not run), 2 usage or invalid sweep,
3 file not found, 130 interrupted.

Examples:
  agentjet sweep examples/sweeps/quickstart.yaml
  agentjet sweep examples/sweeps/quickstart.yaml --parallel 2 --campaign-dir sweeps/qs-1
  agentjet sweep examples/sweeps/quickstart.yaml --dry-run
  agentjet sweep --resume sweeps/qs-1
  agentjet sweep report sweeps/qs-1`;

const pct = (x: number | null): string => (x === null ? "-" : `${(x * 100).toFixed(1)}%`);
const finalText = (f: FinalMetrics | null): string =>
  f === null ? "no metrics" : `${f.steps} steps, held-out success greedy ${pct(f.greedy)} sampled ${pct(f.sampled)}, final reward ${f.reward === null ? "-" : f.reward.toFixed(3)}`;

function formatEvent(e: SweepEvent): string | null {
  switch (e.event) {
    case "sweep-start":
      return `sweep ${e.name}: ${e.runs} runs, ${e.toRun} to run, ${e.parallel} at a time${e.resumed ? " (resumed)" : ""}; campaign ${e.campaignDir}`;
    case "run-start":
      return `[${e.id}] started${e.mode === "resume" ? " (continuing from its checkpoint)" : ""}, process ${e.pid}`;
    case "run-end":
      return `[${e.id}] ${e.status}${e.exitCode !== null && e.exitCode !== 0 ? ` (exit ${e.exitCode})` : ""} in ${(e.durationMs / 1000).toFixed(1)} s: ${finalText(e.final)}${e.error ? `\n${e.error.replace(/^/gm, "    ")}` : ""}`;
    case "sweep-end":
      return e.summary ? summaryText(e.summary) : `sweep ${e.reason}`;
    case "log":
      return `sweep: ${e.message}`;
    case "error":
      return null;
  }
}

function summaryText(s: SweepSummary): string {
  const c = s.counts;
  const lines = [`sweep ${s.name}: ${c.done} done, ${c.failed} failed, ${c.interrupted + c.running} interrupted, ${c.pending} pending`];
  for (const cfg of s.configs) {
    const g = cfg.greedy;
    lines.push(`  ${cfg.label}: ${cfg.done}/${cfg.runs.length} done, greedy ${g ? `${pct(g.mean)} ± ${pct(g.std)}` : "-"}, reward ${cfg.reward ? cfg.reward.mean.toFixed(3) : "-"}`);
  }
  if (s.best) lines.push(`  best: ${s.best.label} (mean ${s.best.by} ${s.best.by === "reward" ? s.best.mean.toFixed(3) : pct(s.best.mean)})`);
  lines.push(`  wrote ${s.report}`);
  return lines.join("\n");
}

interface Output {
  emit(e: SweepEventInput): void;
  error(err: SweepError): void;
}

function createOutput(json: boolean): Output {
  const emit = (input: SweepEventInput): void => {
    const e = { ...input, time: new Date().toISOString() } as SweepEvent;
    if (json) process.stdout.write(`${JSON.stringify(e)}\n`);
    else {
      const text = formatEvent(e);
      if (text !== null) process.stdout.write(`${text}\n`);
    }
  };
  return {
    emit,
    error(err) {
      process.stderr.write(`agentjet sweep: ${err.message} (${err.code})\n`);
      if (json) emit({ event: "error", code: err.code, message: err.message });
    },
  };
}

async function report(dir: string, json: boolean): Promise<number> {
  const summary = await buildSweepReport(resolve(dir), readCampaign(resolve(dir)));
  process.stdout.write(json ? `${JSON.stringify(summary)}\n` : `${summaryText(summary)}\n`);
  return EXIT.ok;
}

/** Runs the campaign with Ctrl-C wired: the first stops cleanly, a second (not the terminal's echo of the first) at once. */
async function runWithSignals(run: (signal: AbortSignal, force: AbortSignal) => Promise<SweepResult>, out: Output): Promise<number> {
  const stop = new AbortController();
  const force = new AbortController();
  const stopListening = onInterrupt(
    () => {
      process.stderr.write("\nagentjet sweep: stopping cleanly (running runs checkpoint and stop); Ctrl-C again to stop them at once\n");
      stop.abort();
    },
    () => {
      process.stderr.write("agentjet sweep: stopping the runs at once\n");
      force.abort();
    },
  );
  try {
    const result = await run(stop.signal, force.signal);
    out.emit({ event: "sweep-end", reason: result.reason, summary: result.summary });
    return result.reason === "done" ? EXIT.ok : result.reason === "interrupted" ? EXIT.interrupted : EXIT.failure;
  } finally {
    stopListening();
  }
}

async function main(out: Output, values: Values, positionals: string[]): Promise<number> {
  if (positionals[0] === "report") {
    if (positionals.length !== 2) throw new SweepError("AJ_ERR_SWEEP_USAGE", "give the campaign directory: agentjet sweep report <campaign-dir>");
    return report(positionals[1]!, values.json);
  }
  const parallelFlag = values.parallel === undefined ? undefined : parseIntFlag("parallel", values.parallel, 1, 256);
  if (parallelFlag?.ok === false) throw new SweepError("AJ_ERR_SWEEP_USAGE", parallelFlag.message);
  const parallel = parallelFlag?.value;
  const projectDir = process.cwd();
  if (values.resume !== undefined) {
    if (positionals.length > 0 || values["campaign-dir"] !== undefined || values["dry-run"]) {
      throw new SweepError("AJ_ERR_SWEEP_USAGE", "--resume takes the campaign directory alone (no sweep file, --campaign-dir or --dry-run)");
    }
    const dir = resolve(values.resume);
    const campaign = readCampaign(dir);
    return runWithSignals(
      (signal, force) =>
        runSweep({ dir, campaign, parallel: parallel ?? campaign.parallel, projectDir, resumed: true, retryFailed: values["retry-failed"], signal, force, emit: out.emit }),
      out,
    );
  }
  if (positionals.length !== 1) throw new SweepError("AJ_ERR_SWEEP_USAGE", "give exactly one of <sweep.yaml>, --resume <campaign-dir> or report <campaign-dir>");
  if (values["retry-failed"]) throw new SweepError("AJ_ERR_SWEEP_USAGE", "--retry-failed goes with --resume");
  const loaded = await loadSweepFile(positionals[0]!);
  const runs = expandSweep(loaded);
  const dir = resolve(values["campaign-dir"] ?? join("sweeps", loaded.sweep.name));
  // Before the dry run too, so that a dry run that says "valid" is one that would start.
  if (existsSync(campaignPath(dir))) throw new CampaignExistsError(dir);
  if (values["dry-run"]) {
    for (const r of runs) {
      const params = Object.entries(r.params).map(([k, v]) => `${k}=${formatValue(v)}`);
      if (values.json) process.stdout.write(`${JSON.stringify({ id: r.id, params: r.params, seed: r.seed, config: r.config })}\n`);
      else process.stdout.write(`${r.id}: ${[...params, `seed=${r.seed}`].join(" ")}\n`);
    }
    const shown = relative(projectDir, dir);
    if (!values.json) process.stdout.write(`${runs.length} runs, valid; campaign directory would be ${shown === "" ? "." : shown.startsWith("..") || isAbsolute(shown) ? dir : shown}\n`);
    return EXIT.ok;
  }
  const campaign = createCampaign(dir, { name: loaded.sweep.name, sweepFile: loaded.source, parallel: parallel ?? loaded.sweep.parallel, runs });
  return runWithSignals(
    (signal, force) => runSweep({ dir, campaign, parallel: campaign.parallel, projectDir, resumed: false, signal, force, emit: out.emit }),
    out,
  );
}

const OPTIONS = {
  resume: { type: "string" },
  "campaign-dir": { type: "string" },
  parallel: { type: "string" },
  "retry-failed": { type: "boolean", default: false },
  "dry-run": { type: "boolean", default: false },
  json: { type: "boolean", default: false },
} as const;
type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>["values"];

export const command: Command = {
  name: "sweep",
  summary: "Run a hyperparameter sweep (grid or random, seeds) of training runs and compare them",
  help: HELP,
  async run(argv) {
    const json = argv.includes("--json");
    const out = createOutput(json);
    let parsed;
    try {
      parsed = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS, strict: true });
    } catch (err) {
      out.error(new SweepError("AJ_ERR_SWEEP_USAGE", (err as Error).message));
      if (!json) process.stderr.write(`\n${HELP}\n`);
      return EXIT.usage;
    }
    try {
      return await main(out, parsed.values, parsed.positionals);
    } catch (err) {
      if (err instanceof SweepError) {
        out.error(err);
        return exitCodeFor(err.code);
      }
      // Anything else (an environment that will not install, a campaign directory that cannot be written) still ends as a coded line.
      const code = (err as { code?: unknown }).code;
      out.error(new SweepError(typeof code === "string" && code.startsWith("AJ_ERR_") ? code : "AJ_ERR_SWEEP_FAILED", (err as Error).message, { cause: err }));
      return EXIT.failure;
    }
  },
};
