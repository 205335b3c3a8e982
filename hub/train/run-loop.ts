import type { AddressInfo } from "node:net";
import type { buildServer } from "../../server/app/build-server.ts";
import type { RunConfig } from "../../server/config/run-config.ts";
import type { Engine } from "../../server/engines/engine.ts";
import { createEpisodeStorePort } from "../../server/episodes/episode-store-port.ts";
import { type SamplePool, selectTrainingConfig, type StepReport, TrainingCoordinator } from "../../server/training/index.ts";
import { buildReport } from "../report/build-report.ts";
import { registryFromEpisodeStore, Scheduler, schedulerOptionsFromRunConfig, sharesAt } from "../scheduler/index.ts";
import type { SchedulerState } from "../scheduler/state.ts";
import { swarmPlugin } from "../swarm/index.ts";
import { startLocalClients } from "../swarm/local-clients.ts";
import { writeCheckpoint } from "./checkpoint.ts";
import { NoProgressError, StorageError } from "./errors.ts";
import { explainFiltered } from "./explain-filtered.ts";
import { evaluateSkill } from "./evaluate-skill.ts";
import type { EvalEvent, RunEvent } from "./events.ts";
import type { PreparedEnvironment } from "./prepare-environments.ts";
import type { FillStatus } from "./progress.ts";
import type { RunResult, RunTrainingOptions } from "./run-training.ts";
import { episodeEndEvent, StepStats } from "./step-stats.ts";
import type { TrainedLedger } from "./trained-ledger.ts";

/** Syncs in a row with nothing trained (every group filtered) before the run gives up. */
const MAX_IDLE_SYNCS = 50;

type Emit = (event: RunEvent) => void;
type Log = (level: "info" | "warn" | "error", message: string) => void;

/**
 * One start of a run, once runTraining has built the server and restored what it resumes: starts the
 * coordinator, the scheduler and the local clients, turns each sync into a step (ledger, step event,
 * checkpoint, evaluation), and owns the stop sequence.
 */
export class RunLoop {
  readonly #o: RunTrainingOptions & { runDir: string; session: number };
  readonly #envs: PreparedEnvironment[];
  readonly #engines: ReadonlyMap<string, Engine>;
  readonly #pool: SamplePool;
  readonly #ledger: TrainedLedger;
  readonly #emit: Emit;
  readonly #log: Log;
  readonly #stats: StepStats;
  readonly #pendingEvals = new Set<Promise<void>>();
  #step: number;
  #idleSyncs = 0;
  #stopping = false;
  #finish: (result: { reason: RunResult["reason"]; error?: unknown }) => void = () => undefined;
  #scheduler: Scheduler | null = null;
  #lastFill = 0;
  #stepTimes: number[] = [];

  constructor(
    o: RunTrainingOptions & { runDir: string; session: number },
    envs: PreparedEnvironment[],
    engines: ReadonlyMap<string, Engine>,
    pool: SamplePool,
    ledger: TrainedLedger,
    emit: Emit,
    log: Log,
    step: number,
  ) {
    this.#o = o;
    this.#envs = envs;
    this.#engines = engines;
    this.#pool = pool;
    this.#ledger = ledger;
    this.#emit = emit;
    this.#log = log;
    this.#step = step;
    this.#stats = new StepStats(new Map(envs.map((e) => [e.name, e.installed.manifest.reward.max])));
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

  #done(): boolean {
    return this.#version() >= this.#config.run.steps;
  }

  async execute(
    app: Awaited<ReturnType<typeof buildServer>>,
    schedulerState: SchedulerState | undefined,
    cleanup: () => Promise<void>,
    cleanups: Array<() => Promise<void>>,
  ): Promise<RunResult> {
    const config = this.#config;
    const finished = new Promise<{ reason: RunResult["reason"]; error?: unknown }>((r) => (this.#finish = r));
    const store = app.agentjet.store;
    const coordinator: TrainingCoordinator = new TrainingCoordinator({
      store: createEpisodeStorePort(store),
      engines: Object.fromEntries(this.#engines),
      pool: this.#pool,
      config: selectTrainingConfig(config),
      onSync: (reports) => this.#onSync(reports, coordinator),
      onWarning: (m) => this.#log("warn", m),
      onError: (err) => this.#log("error", `training step failed: ${err instanceof Error ? err.message : String(err)}`),
    });

    const byName = new Map(this.#envs.map((e) => [e.name, e]));
    const options = schedulerOptionsFromRunConfig(config, {
      resolve: (name) => {
        const e = byName.get(name)!;
        return { version: e.installed.version, hash: e.installed.sha256, agents: e.installed.manifest.agents };
      },
      loadTasks: (env, split) => byName.get(env)!.runtime.listTasks(split),
      registry: registryFromEpisodeStore(store),
      baseUrl: () => `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1`,
      ...(schedulerState ? { state: schedulerState } : {}),
    });
    options.session = this.#o.session;
    // The run ends on weight versions, not batches (filtered batches train nothing), and evaluates on steps.
    delete options.maxBatches;
    delete options.eval;
    const scheduler = await Scheduler.create(options);
    this.#scheduler = scheduler;
    const { policies, frozen } = app.agentjet;
    this.#evaluate = (step) => evaluateSkill({ envs: this.#envs, config, policies, frozen, step, stage: "rl" });
    let batchesSinceStep = 0;
    scheduler.subscribe((e) => {
      this.#stats.observe(e);
      if (e.type === "batch" && ++batchesSinceStep > MAX_IDLE_SYNCS && !this.#stopping) {
        this.#finish({ reason: "failed", error: new NoProgressError(batchesSinceStep, this.#step) });
      }
      if (e.type === "episode-end") {
        this.#emit(episodeEndEvent(e, this.#step));
        this.#showFill(coordinator.phase());
      }
      if (e.type === "group-failed") coordinator.discardGroup(e.env, e.groupId);
      if (e.type === "env-mismatch") this.#log("warn", `client '${e.clientId}': ${e.message}`);
    });
    this.#batchReset = () => (batchesSinceStep = 0);
    await app.register(swarmPlugin, { scheduler });
    await app.listen({ host: config.server.host, port: this.#o.port ?? config.server.port });
    const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    coordinator.start();
    scheduler.start();
    cleanups.push(async () => {
      await scheduler.close();
      await coordinator.stop();
    });
    const { auth } = app.agentjet;
    const clients = await startLocalClients({
      url: origin,
      token: auth.clientTokens[0] ?? auth.adminToken,
      count: config.clients.local,
      environments: this.#envs.map((e) => ({ runtime: e.runtime, hash: e.installed.sha256, dev: e.dev })),
      concurrency: config.clients.concurrency,
    });
    cleanups.push(clients.stop);

    this.#emit({
      type: "start",
      time: new Date().toISOString(),
      runDir: this.#o.runDir,
      steps: config.run.steps,
      ...(this.#step > 0 || this.#o.resume ? { resumedFrom: this.#step } : {}),
      policies: [...this.#engines.keys()],
      environments: this.#envs.map((e) => e.name),
    });
    this.#log("info", `server ${origin}/v1, ${config.clients.local} local client(s) x ${config.clients.concurrency} episodes`);
    if (config.eval.every > 0 && this.#step === 0) this.#startEval(0);
    if (this.#done()) this.#finish({ reason: "done" });

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
    await scheduler.close();
    await clients.stop();
    await coordinator.stop();
    this.#o.progress.close();
    let end = outcome;
    try {
      const dir = await writeCheckpoint(this.#o.runDir, this.#engines, { step: this.#step, versions: this.#versions(), scheduler: snapshot, final: true });
      this.#emit({ type: "checkpoint", time: new Date().toISOString(), step: this.#step, version: this.#version(), path: dir });
    } catch (err) {
      if (!(err instanceof StorageError)) throw err;
      this.#log("error", `${err.message} (no final checkpoint; --resume continues from the last one written)`);
      if (end.reason !== "failed") end = { reason: "failed", error: err };
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

  #batchReset: () => void = () => undefined;
  #evaluate: (step: number) => Promise<EvalEvent[]> = async () => [];

  async #onSync(reports: StepReport[], coordinator: TrainingCoordinator): Promise<void> {
    const trained = reports.filter((r) => r.outcome === "trained");
    if (trained.length === 0) {
      if (++this.#idleSyncs % 10 === 0) this.#log("warn", `${this.#idleSyncs} batches in a row trained nothing: ${explainFiltered(reports)}`);
      return;
    }
    this.#idleSyncs = 0;
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
          scheduler: this.#scheduler!.snapshot(),
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
    if (every > 0 && this.#step % every === 0 && !this.#stopping) this.#startEval(this.#step);
    if (this.#done()) {
      void coordinator.stop();
      this.#finish({ reason: "done" });
    } else if (this.#step >= steps * 4 + MAX_IDLE_SYNCS) {
      this.#finish({ reason: "failed", error: new NoProgressError(this.#step, this.#version()) });
    }
  }

  #startEval(step: number): void {
    const p = this.#evaluate(step).then(
      (events) => events.forEach((e) => this.#emit(e)),
      (err: unknown) => this.#log("warn", `evaluation at step ${step} failed: ${err instanceof Error ? err.message : String(err)}`),
    );
    const tracked = p.finally(() => this.#pendingEvals.delete(tracked));
    this.#pendingEvals.add(tracked);
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
