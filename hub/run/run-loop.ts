import { AgentJetError } from "../../errors/index.ts";
import type { RunConfig } from "../../server/config/index.ts";
import type { Engine } from "../../server/engines/index.ts";
import type { EpisodeStore } from "../../server/episodes/index.ts";
import type { CoordinatorPhase, SamplePool, StepReport, TrainingCoordinator } from "../../server/training/index.ts";
import { buildReport } from "../report/build-report.ts";
import { type Scheduler, type SchedulerEvent, sharesAt, type WaitingEnvironment } from "../scheduler/index.ts";
import { createFailureLog, type FailureLog } from "../swarm/failure-log.ts";
import { clientDrivenEvents } from "./client-driven-events.ts";
import { startLocalClients } from "../swarm/local-clients.ts";
import { writeCheckpoint } from "../train/checkpoint.ts";
import { NoProgressError, StorageError } from "../train/errors.ts";
import { evaluateSkill } from "../train/evaluate-skill.ts";
import { type EvalEvent, EVENTS_FORMAT, type RunEvent } from "../train/events.ts";
import { explainFiltered } from "../train/explain-filtered.ts";
import type { PreparedEnvironment } from "../train/prepare-environments.ts";
import type { FillStatus, ProgressSink } from "../train/progress.ts";
import { episodeEndEvent, StepStats } from "../train/step-stats.ts";
import type { TrainedLedger } from "../train/trained-ledger.ts";
import type { AssembledRun } from "./assemble-run.ts";

type LocalClients = Awaited<ReturnType<typeof startLocalClients>>;

export interface RunResult {
  reason: "done" | "interrupted" | "failed";
  step: number;
  versions: Record<string, number>;
  runDir: string;
  error?: unknown;
}

export interface RunLoopOptions {
  config: RunConfig;
  runDir: string;
  /** This start resumes an earlier one (the start event says from which step). */
  resume: boolean;
  /**
   * The start stage (warm-start) was stopped before it finished: nothing starts, and no checkpoint is
   * written, so that `--resume` plays the start stage again (a step-0 checkpoint of half-warm-started
   * weights was resumed as if the warm-start had run).
   */
  startInterrupted?: boolean;
  /** The step the run continues from (0 on a first start). */
  step: number;
  envs: readonly PreparedEnvironment[];
  progress: ProgressSink;
  emit: (event: RunEvent) => void;
  log: (level: "info" | "warn" | "error", message: string) => void;
  /** Where clients reach the service (`http://host:port`). */
  origin: () => string;
  /** The service's loopback address; local clients connect there. */
  localOrigin: () => string;
  /** The token local clients connect with (a client token of the service, else its admin token). */
  clientToken: string | null;
  /** In-process swarm clients (`agentjet train`: `clients.local`; `agentjet serve`: 0). */
  localClients: number;
  /** Hands the scheduler to the service's `/swarm` route; returns the detach function. */
  attach: (scheduler: Scheduler, coordinator: TrainingCoordinator) => () => void;
  /** Aborting it stops the run cleanly (Ctrl-C). */
  signal?: AbortSignal;
  /** Write report.html at the end (default true). */
  report?: boolean;
}

/** Syncs in a row with nothing trained (every group filtered) before the run gives up. */
const MAX_IDLE_SYNCS = 50;

type Emit = (event: RunEvent) => void;
type Log = (level: "info" | "warn" | "error", message: string) => void;

/**
 * One start of a run, once `openRun` has assembled it and restored what it resumes: starts the
 * coordinator, the scheduler and the local clients, turns each sync into a step (ledger, step event,
 * checkpoint, evaluation), and owns the stop sequence.
 */
export class RunLoop {
  readonly #o: RunLoopOptions;
  readonly #envs: readonly PreparedEnvironment[];
  readonly #engines: ReadonlyMap<string, Engine>;
  readonly #pool: SamplePool;
  readonly #ledger: TrainedLedger;
  readonly #coordinator: TrainingCoordinator;
  readonly #emit: Emit;
  readonly #log: Log;
  readonly #stats: StepStats;
  readonly #pendingEvals = new Set<Promise<void>>();
  #step: number;
  #idleSyncs = 0;
  /** The last sync's reports when it trained nothing (what a no-progress failure explains). */
  #idleReports: StepReport[] = [];
  #stopping = false;
  #finish: (result: { reason: RunResult["reason"]; error?: unknown }) => void = () => undefined;
  readonly #scheduler: Scheduler;
  readonly #store: EpisodeStore;
  #clientFailures: FailureLog | null = null;
  #lastFill = 0;
  #stepTimes: number[] = [];

  constructor(o: RunLoopOptions, run: AssembledRun) {
    this.#o = o;
    this.#envs = o.envs;
    this.#engines = run.engines;
    this.#pool = run.pool;
    this.#ledger = run.ledger;
    this.#coordinator = run.coordinator;
    this.#scheduler = run.scheduler;
    this.#store = run.store;
    this.#emit = o.emit;
    this.#log = o.log;
    this.#step = o.step;
    this.#stats = new StepStats(new Map(o.envs.map((e) => [e.name, e.installed.manifest.reward.max])));
    const { policies, frozen } = run.app.agentjet;
    this.#evaluate = (step) => evaluateSkill({ envs: [...o.envs], config: o.config, policies, frozen, step, stage: "rl" });
  }

  /** The coordinator's phase while the run goes; "stopping" once its stop sequence began. */
  phase(): CoordinatorPhase | "stopping" {
    return this.#stopping ? "stopping" : this.#coordinator.phase();
  }

  step(): number {
    return this.#step;
  }

  versions(): Record<string, number> {
    return this.#versions();
  }

  /** Environments whose scheduled episodes wait for a client that can run them. */
  waiting(): WaitingEnvironment[] {
    return this.#scheduler.waiting();
  }

  /** Stops the run cleanly (as Ctrl-C does): `execute` resolves with reason "interrupted". */
  stop(): void {
    this.#finish({ reason: "interrupted" });
  }

  get #config(): RunConfig {
    return this.#o.config;
  }

  #versions(): Record<string, number> {
    return Object.fromEntries([...this.#engines].map(([n, e]) => [n, e.version()]));
  }

  #version(): number {
    return Math.min(...[...this.#engines.values()].map((e) => e.version()));
  }

  /** The policies short of `run.steps`, as `'name' at step N`. */
  #behind(): string[] {
    return [...this.#engines].filter(([, e]) => e.version() < this.#config.run.steps).map(([name, e]) => `'${name}' at step ${e.version()}`);
  }

  #done(): boolean {
    return this.#version() >= this.#config.run.steps;
  }

  /** Runs until done, stopped or failed; `cleanup` closes what `openRun` opened, `cleanups` collects more. */
  async execute(cleanup: () => Promise<void>, cleanups: Array<() => Promise<void>>): Promise<RunResult> {
    const config = this.#config;
    const finished = new Promise<{ reason: RunResult["reason"]; error?: unknown }>((r) => (this.#finish = r));
    const coordinator = this.#coordinator;
    const scheduler = this.#scheduler;
    let batchesSinceStep = 0;
    // Under any-client / all-clients a step waits for the clients' agreement, not for batches: batches that
    // finish meanwhile are no sign that filtering drops everything (a run failed while a client's dead
    // socket was still being noticed).
    const countsBatches = config.batching.strategy !== "any-client" && config.batching.strategy !== "all-clients";
    const onEvent = (e: SchedulerEvent): void => {
      this.#stats.observe(e);
      if (e.type === "batch" && countsBatches && ++batchesSinceStep > MAX_IDLE_SYNCS && !this.#stopping) {
        // some policies done with their steps: the run waits on the others, so name them
        const behind = this.#behind();
        const where = behind.length < this.#engines.size ? `${behind.join(", ")} of ${config.run.steps}, the other policies done` : `${this.#step} steps so far`;
        const what = `${batchesSinceStep} batches in a row finished without a training step (${where})`;
        const why = failuresSaid(this.#stats.tail().failures) ?? (this.#idleReports.length > 0 ? explainFiltered(this.#idleReports) : undefined);
        this.#finish({ reason: "failed", error: why ? new NoProgressError(what, why) : new NoProgressError(what) });
      }
      if (e.type === "episode-end") {
        this.#emit(episodeEndEvent(e, this.#step));
        this.#showFill(coordinator.phase());
      }
    };
    scheduler.subscribe(onEvent);
    // episodes callers begin themselves never pass the scheduler: the store tells
    const offClientDriven = clientDrivenEvents(this.#store, onEvent);
    cleanups.push(async () => offClientDriven());
    this.#batchReset = () => (batchesSinceStep = 0);
    // Before any episode is registered: a resume counts the start events to name its episodes apart (`-r<k>`).
    this.#emit({
      type: "start",
      time: new Date().toISOString(),
      runDir: this.#o.runDir,
      steps: config.run.steps,
      ...(this.#step > 0 || this.#o.resume ? { resumedFrom: this.#step } : {}),
      policies: [...this.#engines.keys()],
      environments: this.#envs.map((e) => e.name),
      format: EVENTS_FORMAT,
    });
    const detach = this.#o.attach(scheduler, coordinator);
    cleanups.push(async () => {
      detach();
      await scheduler.close();
      await coordinator.stop();
    });
    // A run resumed after its last step (a final checkpoint at `steps`) starts nothing: its pool may still
    // hold a ready batch, which a started coordinator would train as step steps+1.
    let clients: LocalClients | null = null;
    if (this.#done()) {
      this.#log("info", `the run is at step ${this.#step}, which reaches run.steps (${config.run.steps}): nothing to train`);
      this.#finish({ reason: "done" });
    } else if (!this.#o.startInterrupted) clients = await this.#startRolling(cleanups);

    const onAbort = (): void => this.#finish({ reason: "interrupted" });
    if (this.#o.signal?.aborted) onAbort();
    this.#o.signal?.addEventListener("abort", onAbort, { once: true });

    const outcome = await finished;
    this.#o.signal?.removeEventListener("abort", onAbort);
    this.#stopping = true;
    if (outcome.reason === "done") await Promise.all(this.#pendingEvals);
    if (outcome.reason === "failed") this.#log("error", outcome.error instanceof Error ? outcome.error.message : String(outcome.error));

    // Stop order: no new episodes or results, then no new steps, then the final checkpoint.
    const snapshot = scheduler.snapshot();
    // Detached first: closing the scheduler then leaves the clients' sockets open for the next run.
    detach();
    await scheduler.close();
    await clients?.stop();
    // what is still counted is said now, before the run's end event (the last line of metrics.jsonl)
    this.#clientFailures?.close();
    await coordinator.stop();
    this.#o.progress.close();
    let end = outcome;
    if (this.#o.startInterrupted) {
      this.#log("warn", "stopped before the warm-start finished: no checkpoint is written, and the run started again on this directory (train --resume, or serve) plays the warm-start again");
    } else {
      try {
        const dir = await writeCheckpoint(this.#o.runDir, this.#engines, { step: this.#step, versions: this.#versions(), scheduler: snapshot, final: true });
        this.#emit({ type: "checkpoint", time: new Date().toISOString(), step: this.#step, version: this.#version(), path: dir });
      } catch (err) {
        if (!(err instanceof StorageError)) throw err;
        this.#log("error", `${err.message} (no final checkpoint; the run started again on this directory, with train --resume or serve, continues from the last one written)`);
        if (end.reason !== "failed") end = { reason: "failed", error: err };
      }
    }
    this.#emit({ type: "end", time: new Date().toISOString(), reason: end.reason, step: this.#step, ...this.#stats.tail() });
    await cleanup();
    if (this.#o.report ?? true) {
      const summary = await buildReport(this.#o.runDir);
      for (const line of [...summary.skill.headline, ...summary.skill.warnings.map((w) => `warning: ${w}`)])
        this.#o.progress.event({ type: "log", time: new Date().toISOString(), level: "info", message: line });
      this.#o.progress.event({ type: "log", time: new Date().toISOString(), level: "info", message: `report: ${summary.files.at(-1)}` });
    }
    return {
      reason: end.reason,
      step: this.#step,
      versions: this.#versions(),
      runDir: this.#o.runDir,
      ...(end.error !== undefined ? { error: end.error } : {}),
    };
  }

  /** Starts the coordinator, the local clients, the evaluation at step 0 and the scheduler. */
  async #startRolling(cleanups: Array<() => Promise<void>>): Promise<LocalClients> {
    const config = this.#config;
    for (const p of unboundPolicies(config)) {
      // the run ends when every policy has trained run.steps steps: a policy no seat plays holds it open
      this.#log("warn", `policy '${p}' is bound by no environment's roles: only client-driven episodes (POST /v1/episodes/begin) train it, and the run ends only once it has trained run.steps steps`);
    }
    this.#coordinator.start();
    const origin = this.#o.origin();
    // Why local clients abort episodes (a reward model or judge that cannot score, a workflow that throws):
    // each new reason once in the run's log, repeats counted, as `agentjet client` says them.
    const failures = createFailureLog((line) => this.#log("warn", `local clients: ${line}`));
    this.#clientFailures = failures;
    const clients = await startLocalClients({
      url: this.#o.localOrigin(),
      token: this.#o.clientToken,
      count: this.#o.localClients,
      environments: this.#envs.map((e) => ({ runtime: e.runtime, hash: e.installed.sha256, dev: e.dev, dir: e.installed.dir })),
      concurrency: config.clients.concurrency,
      agreeSyncEvery: agreeSyncEvery(config, this.#o.localClients),
      onEvent: (_clientId, e) => {
        if (e.type === "episode-abort") failures.failed(e.episodeId, e.kind, e.message);
      },
    });
    cleanups.push(async () => {
      await clients.stop();
      failures.close();
    });
    this.#log(
      "info",
      this.#o.localClients > 0
        ? `server ${origin}/v1, ${this.#o.localClients} local client(s) x ${config.clients.concurrency} episodes`
        : `server ${origin}/v1, waiting for clients (agentjet client --server ${origin}, or POST /v1/episodes/begin)`,
    );
    // Evaluation runs on still weights, before the first batch and inside each sync (claims paused): an
    // evaluation that overlapped RL steps measured a mix of weight versions under one step's name.
    if (config.eval.every > 0 && this.#step === 0) await this.#startEval(0);
    this.#scheduler.start();
    return clients;
  }

  #batchReset: () => void = () => undefined;
  readonly #evaluate: (step: number) => Promise<EvalEvent[]>;

  /** The coordinator's `onSync` (assembleRun binds it here). */
  async onSync(reports: StepReport[]): Promise<void> {
    const coordinator = this.#coordinator;
    const trained = reports.filter((r) => r.outcome === "trained");
    if (trained.length === 0) {
      this.#idleReports = reports;
      if (++this.#idleSyncs % 10 === 0) this.#log("warn", `${this.#idleSyncs} batches in a row trained nothing: ${explainFiltered(reports)}`);
      return;
    }
    this.#idleSyncs = 0;
    // a later no-progress failure is explained by the syncs since this step, not an older one's
    this.#idleReports = [];
    this.#batchReset();
    this.#step += 1;
    for (const r of trained) this.#ledger.record(r.policy, this.#step, r.episodeIds);
    const event = this.#stats.take(this.#step, this.#version(), reports, coordinator.counters().merge);
    this.#stepTimes.push(event.durationMs);
    this.#emit(event);
    const { checkpointEvery, steps } = this.#config.run;
    if (checkpointEvery > 0 && this.#step % checkpointEvery === 0 && !this.#done()) {
      try {
        const dir = await writeCheckpoint(this.#o.runDir, this.#engines, {
          step: this.#step,
          versions: this.#versions(),
          scheduler: this.#scheduler.snapshot(),
          final: false,
        });
        this.#emit({ type: "checkpoint", time: new Date().toISOString(), step: this.#step, version: this.#version(), path: dir });
      } catch (err) {
        // The step trained and is recorded; only its checkpoint could not be written. Not a step failure.
        if (!(err instanceof StorageError)) throw err;
        this.#finish({ reason: "failed", error: err });
        return;
      }
    }
    const every = this.#config.eval.every;
    if (every > 0 && this.#step % every === 0 && !this.#stopping) {
      await this.#startEval(this.#step);
    }
    if (this.#done()) {
      void coordinator.stop();
      this.#finish({ reason: "done" });
    } else if (this.#step >= steps * 4 + MAX_IDLE_SYNCS) {
      const behind = this.#behind();
      const unbound = unboundPolicies(this.#config);
      const why = unbound.length > 0 ? `no environment's roles bind ${unbound.map((p) => `'${p}'`).join(", ")}: only client-driven episodes train it` : undefined;
      this.#finish({ reason: "failed", error: new NoProgressError(`${this.#step} training steps ran but ${behind.join(", ")} of ${steps}`, why) });
    }
  }

  #startEval(step: number): Promise<void> {
    const p = this.#evaluate(step).then(
      (events) => events.forEach((e) => this.#emit(e)),
      (err: unknown) => {
        const error = err instanceof Error ? err.message : String(err);
        this.#log("warn", `evaluation at step ${step} failed: ${error}`);
        // the fact the report reads: the log line's words change, and other lines can hold the same words
        this.#emit({ type: "eval-failed", time: new Date().toISOString(), step, error, ...(err instanceof AgentJetError ? { code: err.code } : {}) });
      },
    );
    const tracked = p.finally(() => this.#pendingEvals.delete(tracked));
    this.#pendingEvals.add(tracked);
    return tracked;
  }

  #showFill(phase: ReturnType<TrainingCoordinator["phase"]>): void {
    const now = Date.now();
    if (now - this.#lastFill < 250) return;
    this.#lastFill = now;
    const config = this.#config;
    const shares = sharesAt(config.environments.map((e) => e.weight), this.#step);
    const { perEnv: done, failures, perS } = this.#stats.finished(now);
    const perEnv: FillStatus["perEnv"] = {};
    config.environments.forEach((e, i) => {
      const d = done[e.name];
      perEnv[e.name] = {
        done: d?.episodes ?? 0,
        target: Math.round(config.batching.batchTasks * config.batching.groupSize * shares[i]!),
        ...(d ? { meanReward: d.meanReward, success: d.success } : {}),
      };
    });
    const recent = this.#stepTimes.slice(-5);
    const perStep = recent.length ? recent.reduce((a, b) => a + b, 0) / recent.length : null;
    this.#o.progress.fill({
      step: this.#step + 1,
      steps: config.run.steps,
      version: this.#version(),
      phase: this.#stopping ? "stopping" : phase === "rolling" ? "collecting" : "training",
      perEnv,
      failures,
      episodesPerS: perS,
      etaS: perStep === null ? null : ((config.run.steps - this.#step) * perStep) / 1000,
    });
  }
}

/** Policies no environment's roles bind: only client-driven episodes (POST /v1/episodes/begin) can train them. */
export function unboundPolicies(config: RunConfig): string[] {
  const bound = new Set(config.environments.flatMap((e) => Object.values(e.roles)));
  return Object.keys(config.policies).filter((p) => !bound.has(p));
}

/** The attempts that failed since the last step, as the cause of a run that trains nothing (null when none failed). */
function failuresSaid(failures: Record<string, number>): string | null {
  const parts = Object.entries(failures).map(([kind, n]) => `${n} ${kind}`);
  return parts.length === 0 ? null : `episodes keep failing and are never scored (${parts.join(", ")}; the clients' logs say why)`;
}

/**
 * Local clients agree to sync (any-client / all-clients) once they have played their share of a batch;
 * the other strategies decide on the pool alone.
 */
function agreeSyncEvery(config: RunConfig, clients: number): number {
  const { strategy, batchTasks, groupSize } = config.batching;
  if (strategy !== "any-client" && strategy !== "all-clients") return 0;
  return Math.max(1, Math.ceil((batchTasks * groupSize) / Math.max(1, clients)));
}
