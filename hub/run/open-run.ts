import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { stringify } from "yaml";
import type { FastifyInstance } from "fastify";
import type { AuthTokens } from "../../server/app/index.ts";
import type { RunConfig } from "../../server/config/index.ts";
import type { Engine } from "../../server/engines/index.ts";
import type { SamplePool, TrainingCoordinator } from "../../server/training/index.ts";
import { readMetrics } from "../report/read-metrics.ts";
import type { Scheduler } from "../scheduler/index.ts";
import type { SchedulerState } from "../scheduler/state.ts";
import { policyCheckpointDir, readLatestCheckpoint } from "../train/checkpoint.ts";
import { NoCheckpointError, RunDirInUseError } from "../train/errors.ts";
import { groupsTrainedBy } from "../train/trained-ledger.ts";
import type { RunEvent } from "../train/events.ts";
import { type PreparedEnvironment, prepareEnvironments } from "../train/prepare-environments.ts";
import { writeOrStop } from "../train/storage.ts";
import { lockRunDir, type RunDirLock } from "./run-dir-lock.ts";
import { runStartStage, startWeights } from "../train/warm-start.ts";
import type { ProgressSink } from "../train/progress.ts";
import { assembleRun } from "./assemble-run.ts";
import { configChanges, describeConfigChanges } from "./config-changes.ts";
import { RunLoop, type RunLoopOptions, type RunResult } from "./run-loop.ts";

export interface OpenRunOptions {
  /** The validated run config; with `resume`, the one saved in the run directory. */
  config: RunConfig;
  runDir: string;
  /** Continue the run in `runDir` from its newest checkpoint. */
  resume?: boolean;
  /** Where environments are installed (`.agentjet/`, agentjet.lock) and relative `options.data` resolves. */
  projectDir: string;
  progress: ProgressSink;
  /** Every event, after it is written to metrics.jsonl. */
  onEvent?: (event: RunEvent) => void;
  /** Write report.html at the end (default true). */
  report?: boolean;
  /** In-process swarm clients (default `config.clients.local`). */
  localClients?: number;
  /** Aborting it stops the run cleanly. */
  signal?: AbortSignal;
  /** One clock for the store, the scheduler and the coordinator (default `Date.now`). */
  now?: () => number;
  /** Engines by policy name instead of building them from the config (tests). */
  engines?: Record<string, Engine>;
}

/** A run that is going: its server, its loop, and the promise of how it ends (its stop sequence included). */
export interface OpenedRun {
  /** The run's routes (OpenAI, episodes); the service forwards requests to it. */
  app: FastifyInstance;
  coordinator: TrainingCoordinator;
  scheduler: Scheduler;
  pool: SamplePool;
  envs: readonly PreparedEnvironment[];
  loop: RunLoop;
  finished: Promise<RunResult>;
}

/**
 * Prepares one start of a run and starts it: the run directory (config.yaml, metrics.jsonl), the
 * environments, the parts from `assembleRun`, what `--resume` restores (weights, pool, scheduler
 * state), then the run loop. The service calls it with its origin and its `/swarm` relay.
 */
export async function openRun(
  o: OpenRunOptions,
  service: {
    /** Where clients reach the service; agents get `<origin>/v1`. */
    origin: () => string;
    /** The loopback address of the listening socket (local clients). */
    localOrigin: () => string;
    attach: RunLoopOptions["attach"];
    /** The service's control-plane tokens: the run's routes accept the same. */
    tokens: AuthTokens;
    /** The host names the service gives out as its own (`origin`'s): the run's routes accept them too. */
    allowedHosts?: readonly string[];
    /** Where the tokens are, for the run's log. */
    tokensNote?: string;
    /** Where the run's events go besides metrics.jsonl and `progress` (the service's log). */
    log?: (level: "info" | "warn" | "error", message: string, fields?: Record<string, unknown>) => void;
  },
): Promise<OpenedRun> {
  const runDir = resolve(o.runDir);
  // `--resume` of a directory that is not there creates nothing
  if (o.resume && !existsSync(runDir)) throw new NoCheckpointError(runDir, "the directory does not exist");
  // weights to start from that are not there stop a fresh run before it writes anything
  if (!o.resume) startWeights(o.config, o.projectDir);
  writeOrStop(runDir, "create the run directory", () => mkdirSync(runDir, { recursive: true }));
  // held before the run directory is read: who else runs in it is the first thing to know
  const lock = lockRunDir(runDir);
  try {
    return await openLocked(o, service, { runDir, ...whatToResume(o, runDir) }, lock);
  } catch (err) {
    lock.release();
    throw err;
  }
}

/** The checkpoint `--resume` continues from, or a run to play again from step 0; refuses a start the directory does not allow. */
function whatToResume(o: OpenRunOptions, runDir: string): { resumed: Extract<ReturnType<typeof readLatestCheckpoint>, { kind: "ok" }> | undefined; restart: boolean } {
  const checkpoint = o.resume ? readLatestCheckpoint(runDir) : undefined;
  // A run killed before its first checkpoint kept nothing in any weights: `--resume` plays it again from
  // step 0. One whose checkpoint is damaged did train: it is refused, never played again over its record.
  if (checkpoint?.kind === "damaged") throw new NoCheckpointError(runDir, `its newest checkpoint is damaged: ${checkpoint.why}`);
  const restart = checkpoint?.kind === "none" && existsSync(join(runDir, "run.db"));
  if (checkpoint?.kind === "none" && !restart) throw new NoCheckpointError(runDir, checkpoint.why);
  if (!o.resume && existsSync(join(runDir, "run.db"))) throw new RunDirInUseError(runDir, readLatestCheckpoint(runDir).kind === "none");
  if (checkpoint?.kind === "ok") {
    // A policy added to config.yaml by hand has no weights to continue from (the engine would only say a file is missing).
    const held = Object.keys(checkpoint.state.versions);
    const added = Object.keys(o.config.policies).filter((p) => !held.includes(p));
    if (added.length) {
      throw new NoCheckpointError(
        runDir,
        `its config names ${added.map((p) => `policy '${p}'`).join(", ")}, which its checkpoint ${checkpoint.dir} does not hold (it holds ${held.map((p) => `'${p}'`).join(", ")}): a resumed run trains the policies it started with: run this config as a new run (another --run-dir; --from takes a checkpoint's weights)`,
      );
    }
  }
  return { resumed: checkpoint?.kind === "ok" ? checkpoint : undefined, restart };
}

/** `openRun` once this process holds the run directory: every write of the run happens here, and the lock goes with the run's cleanup. */
async function openLocked(
  o: OpenRunOptions,
  service: Parameters<typeof openRun>[1],
  at: { runDir: string } & ReturnType<typeof whatToResume>,
  lock: RunDirLock,
): Promise<OpenedRun> {
  const { config, progress } = o;
  const { runDir, resumed, restart } = at;
  if (!o.resume) {
    const saved = { ...config, run: { ...config.run, dir: runDir } };
    const file = join(runDir, "config.yaml");
    // 0600: it can hold server.auth tokens and the key secret.
    writeOrStop(file, "write", () => writeFileSync(file, `# The resolved config of this run (agentjet train); --resume reads it.\n${stringify(saved)}`, { mode: 0o600 }));
  }

  const metricsPath = join(runDir, "metrics.jsonl");
  if (resumed && !resumed.state.final) rewindMetrics(metricsPath, resumed.state.step);
  if (restart) rewindMetrics(metricsPath, -1);
  const session = o.resume ? countStarts(metricsPath) : 0;
  const emit = (event: RunEvent): void => {
    writeOrStop(metricsPath, "append to", () => appendFileSync(metricsPath, `${JSON.stringify(event)}\n`));
    progress.event(event);
    o.onEvent?.(event);
    if (event.type === "log") service.log?.(event.level, event.message);
    else service.log?.("info", `run ${event.type}`, { event });
  };
  const log = (level: "info" | "warn" | "error", message: string): void =>
    emit({ type: "log", time: new Date().toISOString(), level, message });

  // serve continues a run directory with the config it was given: said when that is not the run's own
  const changed = o.resume ? describeConfigChanges(configChanges(runDir, config)) : null;
  if (changed !== null) log("warn", changed);

  if (service.tokensNote) {
    // The run's record (metrics.jsonl, progress) only: the service says it in its own log when it is ready.
    const note: RunEvent = { type: "log", time: new Date().toISOString(), level: "info", message: service.tokensNote };
    writeOrStop(metricsPath, "append to", () => appendFileSync(metricsPath, `${JSON.stringify(note)}\n`));
    progress.event(note);
    o.onEvent?.(note);
  }
  const serviceLog = service.log;
  const envs = await prepareEnvironments(config, { projectDir: o.projectDir, maxInstances: config.clients.concurrency, log: (m) => log("info", m) });
  // run in reverse: the lock goes last, once nothing of the run writes any more
  const cleanups: Array<() => Promise<void>> = [async () => lock.release(), async () => void (await Promise.all(envs.map((e) => e.runtime.close())))];
  const cleanup = async (): Promise<void> => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    cleanups.length = 0;
  };
  try {
    let loop: RunLoop | null = null;
    let startInterrupted = false;
    const run = await assembleRun({
      config,
      runDir,
      envs,
      baseUrl: () => `${service.origin()}/v1`,
      session,
      ...(resumed ? { schedulerState: resumedSchedulerState(resumed.state, groupsTrainedBy(join(runDir, "run.db"), resumed.state.step)) } : {}),
      ...(o.now ? { now: o.now } : {}),
      ...(o.engines ? { engines: o.engines } : {}),
      auth: service.tokens,
      trainedSteps: () => loop?.step() ?? resumed?.state.step ?? 0,
      ...(service.allowedHosts ? { allowedHosts: service.allowedHosts } : {}),
      // the run app's fastify logs nothing (the service writes the access lines): its 5xx go to the service's log
      ...(serviceLog ? { errorLog: { error: (obj: object, msg: string) => serviceLog("error", msg, obj as Record<string, unknown>) } } : {}),
      onSync: (reports) => loop?.onSync(reports),
      log,
    });
    cleanups.push(() => run.app.close());
    if (resumed) {
      for (const [name, engine] of run.engines) await engine.load(policyCheckpointDir(resumed.dir, name));
      restorePool(run.pool, [...run.engines.keys()], resumed.state.final, resumed.state.scheduler, log);
      if (!resumed.state.final) run.ledger.rewindTo(resumed.state.step);
    } else {
      if (restart) {
        dropPool(run.pool, [...run.engines.keys()]);
        run.ledger.rewindTo(0);
        log("warn", "the run stopped before its first checkpoint: starting it again from step 0 in the same directory");
      }
      // engines whose weights live elsewhere (a trainer service) check they hold a new run's initial weights
      for (const engine of run.engines.values()) await engine.startFresh?.();
      const { policies, frozen } = run.app.agentjet;
      await runStartStage({ config, runDir, projectDir: o.projectDir, envs, policies, frozen, emit, log, ...(o.signal ? { signal: o.signal } : {}) });
      // stopped during the start stage (the evaluation before the warm-start, the warm-start): its weights are partial
      startInterrupted = o.signal?.aborted === true;
    }
    loop = new RunLoop(
      {
        config,
        runDir,
        resume: o.resume ?? false,
        startInterrupted,
        step: resumed?.state.step ?? 0,
        envs,
        progress,
        emit,
        log,
        origin: service.origin,
        localOrigin: service.localOrigin,
        localClients: o.localClients ?? config.clients.local,
        clientToken: service.tokens.clientTokens[0] ?? service.tokens.adminToken,
        attach: service.attach,
        ...(o.signal ? { signal: o.signal } : {}),
        ...(o.report !== undefined ? { report: o.report } : {}),
      },
      run,
    );
    const finished = loop.execute(cleanup, cleanups).catch(async (err: unknown) => {
      await cleanup();
      throw err;
    });
    return { app: run.app, coordinator: run.coordinator, scheduler: run.scheduler, pool: run.pool, envs, loop, finished };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/**
 * After a crash the pool starts afresh: of the groups the checkpoint lists as complete, those its
 * weights trained on (`trained`: the ledger up to its step) stay done, and the pooled, untrained ones
 * run again (steps past the checkpoint trained weights that were discarded). A training step takes
 * complete groups as they arrive, so it may train a group of a scheduler batch that is still running.
 */
export function resumedSchedulerState(state: { final: boolean; scheduler: SchedulerState }, trained: ReadonlySet<string>): SchedulerState {
  return state.final ? state.scheduler : { ...state.scheduler, doneGroups: state.scheduler.doneGroups.filter((g) => trained.has(g)) };
}

/**
 * After a crash, the steps past the last checkpoint are trained again from its weights: their step,
 * checkpoint, eval and eval-failed events leave metrics.jsonl, so that it holds one event per step of the
 * lineage.
 */
function rewindMetrics(metricsPath: string, step: number): void {
  if (!existsSync(metricsPath)) return;
  const kept = readFileSync(metricsPath, "utf8")
    .split("\n")
    .filter((line) => {
      if (line.trim() === "") return false;
      try {
        const e = JSON.parse(line) as { type?: string; step?: number };
        return !(["step", "checkpoint", "eval", "eval-failed"].includes(e.type ?? "") && typeof e.step === "number" && e.step > step);
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
  if (!final) dropPool(pool, policies);
  else for (const policy of policies) pool.remove(policy, state.partialEpisodes);
  if (!final) log("warn", "the run did not stop cleanly: resuming from its last periodic checkpoint; untrained episodes after it are played again");
}

/** Empties the sample pool (a crashed session's episodes: what it trained from them was discarded). */
function dropPool(pool: SamplePool, policies: readonly string[]): void {
  for (const policy of policies) pool.clear(policy);
}
