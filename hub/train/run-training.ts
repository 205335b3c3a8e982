import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { stringify } from "yaml";
import { describeTokens, resolveAuthTokens } from "../../server/app/auth-tokens.ts";
import { buildServer } from "../../server/app/build-server.ts";
import { closeServer } from "../../server/app/close-server.ts";
import type { RunConfig } from "../../server/config/run-config.ts";
import type { Engine } from "../../server/engines/engine.ts";
import { SamplePool } from "../../server/training/index.ts";
import { readMetrics } from "../report/read-metrics.ts";
import type { SchedulerState } from "../scheduler/state.ts";
import { policyCheckpointDir, readLatestCheckpoint } from "./checkpoint.ts";
import { NoCheckpointError, RunDirInUseError } from "./errors.ts";
import type { RunEvent } from "./events.ts";
import { prepareEnvironments } from "./prepare-environments.ts";
import type { ProgressSink } from "./progress.ts";
import { RunLoop } from "./run-loop.ts";
import { writeOrStop } from "./storage.ts";
import { TrainedLedger } from "./trained-ledger.ts";
import { runStartStage } from "./warm-start.ts";

export interface RunTrainingOptions {
  /** The validated run config; with `resume`, the one saved in the run directory. */
  config: RunConfig;
  runDir: string;
  /** Continue the run in `runDir` from its newest checkpoint. */
  resume?: boolean;
  /** Where environments are installed (`.agentjet/`, agentjet.lock) and relative `options.data` resolves. */
  projectDir: string;
  /** Overrides `server.port` (0 picks a free one). */
  port?: number;
  progress: ProgressSink;
  /** Aborting it stops the run cleanly (Ctrl-C). */
  signal?: AbortSignal;
  /** Every event, after it is written to metrics.jsonl. */
  onEvent?: (event: RunEvent) => void;
  /** Write report.html at the end (default true). */
  report?: boolean;
}

export interface RunResult {
  reason: "done" | "interrupted" | "failed";
  step: number;
  versions: Record<string, number>;
  runDir: string;
  error?: unknown;
}

/**
 * `agentjet train`: the swarm server, the training coordinator, the scheduler and local clients in one
 * process, writing the run directory (config.yaml, run.db, metrics.jsonl, checkpoints/, report.html).
 * It runs until every policy's weight version reaches `run.steps`, or until `signal` aborts; either way
 * it stops cleanly: in-flight episodes are aborted (finished ones stay pooled in run.db), a final
 * checkpoint is written, and `--resume` continues from it.
 */
export async function runTraining(o: RunTrainingOptions): Promise<RunResult> {
  const { config, progress } = o;
  const runDir = resolve(o.runDir);
  const checkpoint = o.resume ? readLatestCheckpoint(runDir) : undefined;
  if (checkpoint?.kind === "none") throw new NoCheckpointError(runDir, checkpoint.why);
  const resumed = checkpoint?.kind === "ok" ? checkpoint : undefined;
  if (!o.resume && existsSync(join(runDir, "run.db"))) throw new RunDirInUseError(runDir);
  writeOrStop(runDir, "create the run directory", () => mkdirSync(runDir, { recursive: true }));
  if (!o.resume) {
    const saved = { ...config, run: { ...config.run, dir: runDir } };
    const file = join(runDir, "config.yaml");
    writeOrStop(file, "write", () => writeFileSync(file, `# The resolved config of this run (agentjet train); --resume reads it.\n${stringify(saved)}`));
  }

  const metricsPath = join(runDir, "metrics.jsonl");
  if (resumed && !resumed.state.final) rewindMetrics(metricsPath, resumed.state.step);
  const session = o.resume ? countStarts(metricsPath) : 0;
  const emit = (event: RunEvent): void => {
    writeOrStop(metricsPath, "append to", () => appendFileSync(metricsPath, `${JSON.stringify(event)}\n`));
    progress.event(event);
    o.onEvent?.(event);
  };
  const log = (level: "info" | "warn" | "error", message: string): void =>
    emit({ type: "log", time: new Date().toISOString(), level, message });

  const envs = await prepareEnvironments(config, { projectDir: o.projectDir, maxInstances: config.clients.concurrency, log: (m) => log("info", m) });
  const cleanups: Array<() => Promise<void>> = [async () => void (await Promise.all(envs.map((e) => e.runtime.close())))];
  const cleanup = async (): Promise<void> => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    cleanups.length = 0;
  };
  try {
    const auth = resolveAuthTokens({ auth: config.server.auth, runDir, host: config.server.host });
    log("info", describeTokens(auth));
    const rewardRanges = new Map(envs.map((e) => [e.name, e.runtime.manifest.reward]));
    const app = await buildServer({ config, runDir, auth, rewardRanges });
    cleanups.push(() => closeServer(app));
    const engines = new Map<string, Engine>([...app.agentjet.policies].map(([name, p]) => [name, p.engine]));
    if (resumed) {
      for (const [name, engine] of engines) await engine.load(policyCheckpointDir(resumed.dir, name));
    }
    if (!resumed) {
      const { policies, frozen } = app.agentjet;
      await runStartStage({ config, runDir, projectDir: o.projectDir, envs, policies, frozen, emit, log, ...(o.signal ? { signal: o.signal } : {}) });
    }
    const pool = new SamplePool(app.agentjet.db);
    const ledger = new TrainedLedger(app.agentjet.db);
    let schedulerState = resumed?.state.scheduler;
    if (resumed) {
      restorePool(pool, [...engines.keys()], resumed.state.final, resumed.state.scheduler, log);
      if (!resumed.state.final && schedulerState) {
        // After a crash the pool starts afresh, so the groups the checkpoint lists as complete (pooled,
        // untrained) run again; steps past the checkpoint trained weights that were discarded.
        schedulerState = { ...schedulerState, doneGroups: [] };
        ledger.rewindTo(resumed.state.step);
      }
    }
    const run = new RunLoop({ ...o, runDir, session }, envs, engines, pool, ledger, emit, log, resumed?.state.step ?? 0);
    return await run.execute(app, schedulerState, cleanup, cleanups);
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/**
 * After a crash, the steps past the last checkpoint are trained again from its weights: their step,
 * checkpoint and eval events leave metrics.jsonl, so that it holds one event per step of the lineage.
 */
function rewindMetrics(metricsPath: string, step: number): void {
  if (!existsSync(metricsPath)) return;
  const kept = readFileSync(metricsPath, "utf8")
    .split("\n")
    .filter((line) => {
      if (line.trim() === "") return false;
      try {
        const e = JSON.parse(line) as { type?: string; step?: number };
        return !(["step", "checkpoint", "eval"].includes(e.type ?? "") && typeof e.step === "number" && e.step > step);
      } catch {
        return true;
      }
    });
  const tmp = `${metricsPath}.tmp`;
  writeOrStop(metricsPath, "rewind", () => {
    writeFileSync(tmp, kept.map((l) => `${l}\n`).join(""));
    renameSync(tmp, metricsPath);
  });
}

/** How many times the run in this directory has started before (its `start` events). */
function countStarts(metricsPath: string): number {
  return existsSync(metricsPath) ? readMetrics(metricsPath).events.filter((e) => e.type === "start").length : 0;
}

/** A clean stop leaves exactly the pool the checkpoint expects, less the partial groups that run again; after a crash the pool starts afresh. */
function restorePool(
  pool: SamplePool,
  policies: readonly string[],
  final: boolean,
  state: SchedulerState,
  log: (level: "info" | "warn", message: string) => void,
): void {
  for (const policy of policies) {
    const drop = final ? state.partialEpisodes : [...new Set(pool.entries(policy).map((e) => e.episodeId))];
    pool.remove(policy, drop);
  }
  if (!final) log("warn", "the run did not stop cleanly: resuming from its last periodic checkpoint; untrained episodes after it are played again");
}
