import type { FastifyInstance } from "fastify";
import { type AuthTokens, buildServer, type ErrorLog } from "../../server/app/index.ts";
import type { RunConfig } from "../../server/config/index.ts";
import type { Engine } from "../../server/engines/index.ts";
import { beginEpisodeRoute, createEpisodeStorePort, type EpisodeStore } from "../../server/episodes/index.ts";
import { SamplePool, selectTrainingConfig, type StepReport, TrainingCoordinator } from "../../server/training/index.ts";
import { registryFromEpisodeStore, Scheduler, schedulerOptionsFromRunConfig } from "../scheduler/index.ts";
import type { SchedulerState } from "../scheduler/state.ts";
import type { PreparedEnvironment } from "../train/prepare-environments.ts";
import { groupScorers } from "./group-judges.ts";
import { TrainedLedger } from "../train/trained-ledger.ts";

export interface AssembleRunOptions {
  config: RunConfig;
  runDir: string;
  envs: readonly PreparedEnvironment[];
  /** The OpenAI base URL agents call (the listening service's, ending in /v1). */
  baseUrl: () => string;
  /** One milliseconds clock for the store, the scheduler and the coordinator (default `Date.now`). */
  now?: () => number;
  /** Which start of the run this is (0 the first; k the k-th resume): episode ids carry `-r<k>`. */
  session: number;
  schedulerState?: SchedulerState;
  /** The control-plane tokens the run's routes accept (the service's). */
  auth: AuthTokens;
  /** Host names the run's routes accept besides the config's `server.allowedHosts` (the service's own). */
  allowedHosts?: readonly string[];
  /** Where the run's routes log a failed request (a 5xx) with its cause: the service's log (`buildServer`'s `errorLog`). */
  errorLog?: ErrorLog;
  /** Engines by policy name instead of building them from the config (tests). */
  engines?: Record<string, Engine>;
  /** Optimizer steps the run has trained (its step counter): the step whose mixing weights a batch gets. */
  trainedSteps: () => number;
  /** After each sync's steps, before claims resume (checkpoints, step events). */
  onSync: (reports: StepReport[]) => void | Promise<void>;
  log: (level: "info" | "warn" | "error", message: string) => void;
}

/** A training run's parts, wired; nothing started yet. */
export interface AssembledRun {
  /** The run's server (OpenAI routes, episode routes, `POST /v1/episodes/begin`), ready but not listening. */
  app: FastifyInstance;
  store: EpisodeStore;
  coordinator: TrainingCoordinator;
  scheduler: Scheduler;
  engines: ReadonlyMap<string, Engine>;
  pool: SamplePool;
  ledger: TrainedLedger;
}

/** How long a client-driven `begin` waits for claims to resume before it answers 503. */
const ADMIT_WAIT_MS = 30_000;

/**
 * The composition root of a training run, used by `agentjet serve` and `agentjet train`: one server
 * (episode store, tracker, engines), the training coordinator and the scheduler, on one clock, with
 * every port connected:
 * - store -> scheduler: reclaimed and abandoned episodes are re-queued, `resumed` restarts dispatch;
 * - coordinator -> scheduler: `canSchedule()` gates every registration (a sync, a full pool);
 * - scheduler -> coordinator: `agree_sync`, client activity, and clients that left (`all-clients`);
 * - store -> coordinator: ended and aborted episodes (the `EpisodeStorePort`).
 * The `/swarm` route is the service's (`swarm-relay.ts`), so clients stay connected across runs.
 */
export async function assembleRun(o: AssembleRunOptions): Promise<AssembledRun> {
  const { config } = o;
  const now = o.now ?? Date.now;
  const rewardRanges = new Map(o.envs.map((e) => [e.name, e.runtime.manifest.reward]));
  const app = await buildServer({
    config,
    runDir: o.runDir,
    now,
    auth: o.auth,
    rewardRanges,
    ...(o.allowedHosts ? { allowedHosts: o.allowedHosts } : {}),
    ...(o.engines ? { engines: o.engines } : {}),
    ...(o.errorLog ? { errorLog: o.errorLog } : {}),
  });
  try {
    const store = app.agentjet.store;
    const engines = new Map<string, Engine>([...app.agentjet.policies].map(([name, p]) => [name, p.engine]));
    const pool = new SamplePool(app.agentjet.db);
    const ledger = new TrainedLedger(app.agentjet.db);
    // Deterministic mode: one batch at a time, played to its end before it trains (see `run.deterministic`).
    const deterministic = config.run.deterministic;
    let scheduler: Scheduler | null = null;
    const port = createEpisodeStorePort(store);
    const coordinator = new TrainingCoordinator({
      // A drain waits for in-flight episodes, but not for those held for a group judge: their calls are
      // done, and their group mates cannot be claimed until the sync ends (else it waited syncTimeoutS).
      store: {
        ...port,
        inFlight: () => {
          const held = scheduler?.heldForScoring();
          return held?.size ? port.inFlight().filter((id) => !held.has(id)) : port.inFlight();
        },
      },
      ...(deterministic ? { syncGate: () => scheduler !== null && !scheduler.batchInProgress() } : {}),
      engines: Object.fromEntries(engines),
      pool,
      config: selectTrainingConfig(config),
      maxSteps: config.run.steps,
      now,
      onSync: o.onSync,
      onWarning: (m) => o.log("warn", m),
      onError: (err) => o.log("error", `training step failed: ${err instanceof Error ? err.message : String(err)}`),
    });
    const byName = new Map(o.envs.map((e) => [e.name, e]));
    const options = schedulerOptionsFromRunConfig(config, {
      resolve: (name) => {
        const e = byName.get(name)!;
        return { version: e.installed.version, hash: e.installed.sha256, agents: e.installed.manifest.agents };
      },
      loadTasks: (env, split) => byName.get(env)!.runtime.listTasks(split),
      registry: registryFromEpisodeStore(store),
      baseUrl: o.baseUrl,
      ...(o.schedulerState ? { state: o.schedulerState } : {}),
    });
    // The run ends on weight versions, not batches (filtered batches train nothing), and evaluates on steps.
    delete options.maxBatches;
    delete options.eval;
    const scorers = groupScorers(o.envs, store.tracker);
    scheduler = await Scheduler.create({
      ...options,
      session: o.session,
      now,
      canSchedule: () => coordinator.canSchedule(),
      // A schedule follows optimizer steps, not batches (filtered batches train nothing): a new batch trains
      // after the one waiting in the pool, if any, and after the batches planned before it.
      mixStep: (ahead) => o.trainedSteps() + (coordinator.hasReadyBatch() ? 1 : 0) + ahead,
      ...(deterministic ? { mayStartBatch: () => coordinator.canSchedule() && !coordinator.hasReadyBatch() } : {}),
      ...(scorers.size > 0 ? { groupScorer: (env: string) => scorers.get(env) } : {}),
    });
    scheduler.subscribe((e) => {
      if (e.type === "batch" && deterministic) coordinator.tick();
      if (e.type === "env-mismatch") o.log("warn", `client '${e.clientId}': ${e.message}`);
      else if (e.type === "env-waiting") o.log("warn", e.message);
      else if (e.type === "env-served") o.log("info", e.message);
      else if (e.type === "group-failed") coordinator.discardGroup(e.env, e.groupId);
      else if (e.type === "agree-sync") coordinator.agreeSync(e.clientId);
      else if (e.type === "client" && (e.status === "disconnected" || e.status === "lost")) coordinator.forgetClient(e.clientId);
      else if (e.type === "client") coordinator.touchClient(e.clientId);
    });
    const policy = Object.keys(config.policies)[0]!;
    await app.register(async (scope) =>
      beginEpisodeRoute(scope, { store, baseUrl: o.baseUrl, defaultPolicy: policy, admit: () => admit(store, coordinator, ADMIT_WAIT_MS) }),
    );
    await app.ready();
    return { app, store, coordinator, scheduler, engines, pool, ledger };
  } catch (err) {
    await app.close();
    throw err;
  }
}

/** Waits until claims are open and the pool has room, or `waitMs` passes. */
async function admit(store: EpisodeStore, coordinator: TrainingCoordinator, waitMs: number): Promise<boolean> {
  const open = (): boolean => !store.claimsPaused() && coordinator.canSchedule();
  if (open()) return true;
  return new Promise<boolean>((resolve) => {
    const done = (ok: boolean): void => {
      clearInterval(poll);
      clearTimeout(timer);
      off();
      resolve(ok);
    };
    const off = store.on("resumed", () => {
      if (open()) done(true);
    });
    // The pool's cap clears inside a sync, so `resumed` covers it; the poll is a backstop.
    const poll = setInterval(() => open() && done(true), 250);
    const timer = setTimeout(() => done(open()), waitMs);
  });
}
