import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { stringify } from "yaml";
import { z } from "zod";
import { formatConfigIssues, loadRunConfig, type RunConfig, RunConfigSchema } from "../../server/config/index.ts";
import { RunDirInUseError, UnknownExampleError } from "../train/errors.ts";
import { InvalidArgumentsError, InvalidConfigError, ProcessActiveError, UnknownProcessError } from "./errors.ts";
import type { ProcessRecord } from "./process-table.ts";
import { registerTool } from "./register-tool.ts";
import { readRunProgress } from "./run-progress.ts";
import { printedError, StopInput, statusToolParts, stopProcess, tailOf, type ToolContext } from "./tool-context.ts";

const EXAMPLES_DIR = join(import.meta.dirname, "..", "..", "examples");

const RunRef = z.string().min(1).describe("The run: the id run_start returned, or its run directory (relative to the project)");

const StartInput = z.object({
  config: z.string().optional().describe("Path of a run config (YAML), relative to the project"),
  configObject: z.record(z.string(), z.unknown()).optional().describe("An inline run config (the YAML's fields as JSON); see `agentjet config docs`"),
  example: z.string().optional().describe("A shipped example config by name (examples/<name>.yaml), e.g. quickstart"),
  resume: z.string().optional().describe("Continue the run in this directory from its newest checkpoint"),
  runDir: z.string().optional().describe("Run directory (default: the config's run.dir)"),
  steps: z.number().int().min(1).optional().describe("Override run.steps"),
  warmStart: z.number().int().min(0).optional().describe("Override warmStart.steps; 0 skips the warm-start"),
  from: z.string().optional().describe("Start every policy from this checkpoint's weights (a run directory or checkpoint folder)"),
  port: z.number().int().min(0).max(65535).default(0).describe("Server port; 0 (the default here) picks a free one"),
  deterministic: z.boolean().optional().describe("Deterministic mode (run.deterministic)"),
  report: z.boolean().default(true).describe("Write report.html at the end"),
});

const StartResult = z.object({
  id: z.string(),
  runDir: z.string(),
  pid: z.number().int(),
  command: z.array(z.string()).describe("The agentjet arguments the child runs with"),
  logs: z.object({ stdout: z.string(), stderr: z.string() }),
});

const PerEnv = z.record(z.string(), z.object({ episodes: z.number(), meanReward: z.number(), success: z.number() }));

const StatusResult = z.object({
  id: z.string().nullable().describe("null: a run directory this server did not start"),
  runDir: z.string(),
  pid: z.number().int().nullable(),
  state: z.enum(["starting", "running", "done", "failed", "interrupted"]),
  exitCode: z.number().int().nullable(),
  step: z.number().int().describe("Training steps done"),
  steps: z.number().int().nullable().describe("The steps it trains to (run.steps)"),
  lastStep: z
    .object({
      step: z.number().int(),
      time: z.string(),
      durationMs: z.number(),
      episodesPerS: z.number(),
      perEnv: PerEnv,
      perPolicy: z.record(z.string(), z.object({ samples: z.number(), meanReward: z.number(), loss: z.number(), tokens: z.number(), gradNorm: z.number() })),
      failures: z.record(z.string(), z.number()),
    })
    .nullable(),
  latestEval: z.array(
    z.object({ env: z.string(), mode: z.string(), split: z.string(), step: z.number().int(), stage: z.string().nullable(), episodes: z.number(), success: z.number(), meanReward: z.number(), collapsed: z.boolean() }),
  ),
  warmStart: z.object({ policy: z.string(), step: z.number().int(), steps: z.number().int(), loss: z.number(), demoMatch: z.number() }).nullable(),
  checkpoint: z.object({ step: z.number().int(), path: z.string() }).nullable(),
  endReason: z.string().nullable(),
  problems: z.array(z.string()).describe("The last warnings and errors the run logged"),
  error: z.object({ code: z.string(), message: z.string() }).nullable().describe("The error the child printed (--json) when it failed"),
  stderrTail: z.string(),
});
type Status = z.infer<typeof StatusResult>;

/** The config a new run starts from (an inline one is written to the run's record folder); null for a resume. */
async function resolveConfig(ctx: ToolContext, a: z.output<typeof StartInput>, id: string): Promise<{ path: string; config: RunConfig } | null> {
  if (a.resume !== undefined) return null;
  let path: string;
  if (a.configObject !== undefined) {
    const parsed = RunConfigSchema.safeParse(a.configObject);
    if (!parsed.success) throw new InvalidConfigError(`invalid run config: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`, parsed.error.issues);
    path = join(ctx.processes.folderOf(id), "config.yaml");
    writeFileSync(path, stringify(a.configObject));
  } else if (a.example !== undefined) {
    path = join(EXAMPLES_DIR, `${a.example}.yaml`);
    if (!/^[a-z0-9-]+$/.test(a.example) || !existsSync(path)) {
      throw new UnknownExampleError(a.example, readdirSync(EXAMPLES_DIR).filter((f) => f.endsWith(".yaml")).map((f) => f.slice(0, -5)));
    }
  } else path = resolve(ctx.projectDir, a.config!);
  const loaded = await loadRunConfig(path);
  if (loaded.kind !== "ok") throw new InvalidConfigError(`${loaded.kind === "unreadable" ? "unreadable" : "invalid"} run config\n${formatConfigIssues(loaded)}`, loaded.kind === "invalid" ? loaded.issues : []);
  return { path, config: loaded.config };
}

async function startRun(ctx: ToolContext, a: z.output<typeof StartInput>): Promise<z.input<typeof StartResult>> {
  const sources = [a.config, a.configObject, a.example, a.resume].filter((x) => x !== undefined).length;
  if (sources !== 1) throw new InvalidArgumentsError("give exactly one of config, configObject, example or resume");
  if (a.resume !== undefined && (a.from !== undefined || a.warmStart !== undefined)) throw new InvalidArgumentsError("from and warmStart start a run; a resumed run continues from its own checkpoint");
  const id = ctx.processes.newId("run");
  const loaded = await resolveConfig(ctx, a, id);
  const runDir = resolve(ctx.projectDir, a.resume ?? a.runDir ?? loaded!.config.run.dir);
  const active = ctx.processes.activeIn("run", runDir);
  if (active) throw new ProcessActiveError(runDir, active.id);
  if (a.resume === undefined && existsSync(join(runDir, "run.db"))) throw new RunDirInUseError(runDir);
  const args = ["train", ...(a.resume !== undefined ? ["--resume", runDir] : [loaded!.path, "--run-dir", runDir])];
  if (a.steps !== undefined) args.push("--steps", String(a.steps));
  if (a.warmStart !== undefined) args.push("--warm-start", String(a.warmStart));
  if (a.from !== undefined) args.push("--from", resolve(ctx.projectDir, a.from));
  if (a.deterministic) args.push("--deterministic");
  if (!a.report) args.push("--no-report");
  args.push("--port", String(a.port), "--json");
  const record = ctx.processes.start(id, "run", runDir, args);
  return { id, runDir, pid: record.pid, command: args, logs: ctx.processes.logsOf(id) };
}

/** The state of a run: its child's exit when known (0 done, 130 interrupted), else metrics.jsonl's end event. */
export function runStatus(ctx: ToolContext, ref: string): Status {
  const record = ctx.processes.find("run", ref);
  const runDir = record?.dir ?? resolve(ctx.projectDir, ref);
  if (!record && !existsSync(join(runDir, "metrics.jsonl"))) throw new UnknownProcessError(ref, "run");
  const p = readRunProgress(runDir);
  const alive = record ? ctx.processes.isAlive(record) : false;
  const exitCode = record?.exit?.code ?? null;
  let state: Status["state"];
  if (alive) state = p.started ? "running" : "starting";
  else if (record?.exit) state = exitCode === 0 ? "done" : exitCode === 130 || record.exit.signal === "SIGINT" ? "interrupted" : "failed";
  else if (p.end) state = p.end.reason;
  // A run this server did not start and that has no end event may still be running elsewhere.
  else state = record ? "failed" : "running";
  const logs = record ? ctx.processes.logsOf(record.id) : null;
  const s = p.lastStep;
  return {
    id: record?.id ?? null,
    runDir,
    pid: record?.pid ?? null,
    state,
    exitCode,
    step: p.step,
    steps: p.targetSteps,
    lastStep: s
      ? {
          step: s.step,
          time: s.time,
          durationMs: s.durationMs,
          episodesPerS: s.episodesPerS,
          perEnv: s.perEnv,
          perPolicy: Object.fromEntries(Object.entries(s.perPolicy).map(([k, v]) => [k, { samples: v.samples, meanReward: v.meanReward, loss: v.loss, tokens: v.tokens, gradNorm: v.gradNorm }])),
          failures: s.failures,
        }
      : null,
    latestEval: p.latestEval.map((e) => ({ env: e.env, mode: e.mode ?? "sampled", split: e.split, step: e.step, stage: e.stage ?? null, episodes: e.episodes, success: e.success, meanReward: e.meanReward, collapsed: e.collapsed ?? false })),
    warmStart: p.warmStart ? { policy: p.warmStart.policy, step: p.warmStart.step, steps: p.warmStart.steps, loss: p.warmStart.loss, demoMatch: p.warmStart.demoMatch } : null,
    checkpoint: p.checkpoint,
    endReason: p.end?.reason ?? null,
    problems: p.problems,
    error: logs && (state === "failed" || state === "interrupted") ? printedError(logs.stdout) : null,
    stderrTail: logs ? tailOf(logs.stderr) : "",
  };
}

function findLive(ctx: ToolContext, ref: string): ProcessRecord {
  const record = ctx.processes.find("run", ref);
  if (!record) throw new UnknownProcessError(ref, "run");
  return record;
}

const WaitInput = z.object({
  run: RunRef,
  timeoutS: z.number().min(0).max(600).default(45).describe("Give up after this many seconds (default 45: below the usual 60 s request timeout of MCP clients)"),
});

export function registerRunTools(server: McpServer, ctx: ToolContext): void {
  registerTool(server, {
    name: "run_start",
    title: "Start a training run",
    description:
      "Starts `agentjet train ... --json` as a detached child process and returns at once with its id, run directory and pid. Give exactly one of config (a YAML path), configObject (an inline config), example or resume. Poll run_status (or run_wait) for progress; run_stop stops it cleanly.",
    input: StartInput,
    result: StartResult,
    run: (a) => startRun(ctx, a),
  });
  registerTool(server, {
    name: "run_status",
    title: "A training run's state",
    description:
      "State (starting, running, done, failed, interrupted), the current step, the last step's metrics, the latest held-out evaluation per environment and mode, the warm-start's progress, the last checkpoint, and the error a failed run printed. Read from the run directory's metrics.jsonl and the child's exit.",
    ...statusToolParts("run", RunRef, StatusResult, (ref) => runStatus(ctx, ref)),
  });
  registerTool(server, {
    name: "run_wait",
    title: "Wait for a training run to end",
    description: "Waits until the run is no longer starting or running, or the timeout passes (timedOut: true); then answers as run_status.",
    input: WaitInput,
    result: StatusResult.extend({ timedOut: z.boolean() }),
    annotations: { readOnlyHint: true },
    run: async (a) => {
      const record = findLive(ctx, a.run);
      const ended = await ctx.processes.waitExit(record, a.timeoutS * 1000);
      return { ...runStatus(ctx, record.id), timedOut: !ended };
    },
  });
  registerTool(server, {
    name: "run_stop",
    title: "Stop a training run cleanly",
    description:
      "Sends the run's process SIGINT (as Ctrl-C): in-flight episodes are aborted, a checkpoint is written and it exits with 130 (state interrupted); run_start with resume continues it. With wait (default), answers once it has exited or after timeoutS.",
    input: z.object({ run: RunRef, ...StopInput }),
    result: StatusResult.extend({ timedOut: z.boolean() }),
    annotations: { destructiveHint: false },
    run: (a) => stopProcess(ctx, findLive(ctx, a.run), a, (id) => runStatus(ctx, id)),
  });
}
