import type { Task } from "../../sdk/env/index.ts";
import { ENV_MISMATCH_CODE, type ParsedClientMessage } from "../../sdk/swarm/protocol.ts";
import { BatchPlanner } from "./batch-planner.ts";
import { ClientDirectory, type ClientLink, type Hello } from "./client-directory.ts";
import { Deque } from "./deque.ts";
import { Dispatcher } from "./dispatcher.ts";
import { BadStateError, NoTasksError, NoWeightError } from "./errors.ts";
import { EvaluationRuns } from "./evaluation-runs.ts";
import { describeMismatch } from "./match-environments.ts";
import { allZeroStep } from "./mixing.ts";
import type { EpisodeRegistry, LoadTasks, RegistryEvent } from "./port.ts";
import { checkRoleTargets, resolveSeats, type Seats, seatsOf } from "./resolve-seats.ts";
import { deriveSeed } from "./rng.ts";
import type { EnvLane, NewSlot, Slot } from "./slots.ts";
import { type SchedulerState, type SchedulerStateInput, SchedulerStateSchema } from "./state.ts";
import { TaskStream } from "./task-stream.ts";
import type { Counters, EvalReport, EvalRequest, GroupScorer, SchedulerEnvironment, SchedulerEvent, SchedulerStats, WaitingEnvironment } from "./types.ts";
import { WaitingEnvironments } from "./waiting-environments.ts";

export type { ClientLink } from "./client-directory.ts";

export interface SchedulerOptions {
  environments: readonly SchedulerEnvironment[];
  /** Group-relative rewards per environment (a manifest group judge): training groups are scored once all their episodes ended. */
  groupScorer?: (env: string) => GroupScorer | undefined;
  /** Names of the trainable policies and of the frozen models (to resolve role targets). */
  policies: readonly string[];
  frozen: readonly string[];
  loadTasks: LoadTasks;
  registry: EpisodeRegistry;
  /** The OpenAI base URL agents call (the swarm server's, ending in /v1); a function when the port is known only after listen. */
  baseUrl: string | (() => string);
  /**
   * The step whose mixing weights (`SchedulerEnvironment.weight`, a schedule) a new batch gets, given how
   * many batches planned before it are unfinished. The run passes the optimizer steps trained so far plus
   * the batches still to train before this one, so that a schedule follows the optimizer steps. Default:
   * the batch index, which runs ahead of the steps whenever filtering drops whole batches.
   */
  mixStep?: (ahead: number) => number;
  /** Groups (tasks) per batch; config `batching.batchTasks`. */
  batchTasks: number;
  /** Episodes per task; config `batching.groupSize`. */
  groupSize: number;
  /** Retries of an infrastructure-failed episode before its group fails; config `batching.infraRetries`. */
  infraRetries: number;
  /** Run seed (task order, episode seeds); config `run.seed`. */
  seed: number;
  /** Batches planned ahead, counting the oldest unfinished one (default 2: clients never idle at a batch's tail). */
  lookahead?: number;
  /** Plan no more than this many batches in all (config `run.steps`); unbounded when absent. */
  maxBatches?: number;
  /** A client silent this long (or disconnected this long) loses its episodes (default 30000 ms). */
  leaseMs?: number;
  /** How often clients heart-beat (default leaseMs / 3). */
  heartbeatMs?: number;
  /**
   * An environment whose episodes wait this long with no connected client able to run them is reported
   * (an `env-waiting` event, and `waiting()`), once a client has connected at all (default 10000 ms).
   */
  waitingReportMs?: number;
  /** A failed group is replaced by another task of the same environment, so the quota holds (default true). */
  replaceFailedGroups?: boolean;
  /** Evaluate every K completed batches (config `eval`); disabled when `every` is 0 or absent. */
  eval?: { every: number; split: string; tasks: number };
  /** State from `snapshot()` of an earlier run (`--resume`). */
  state?: SchedulerStateInput;
  /** Milliseconds clock for leases (default `Date.now`); the composition root shares one with the store and the coordinator. */
  now?: () => number;
  /**
   * Asked before every registration; false holds dispatch (the coordinator's `canSchedule`: its pool is
   * at `maxCachedEpisodes`, or a sync is under way). Dispatch goes on at `claims-resumed`, a result, a
   * client's hello, or the lease tick. Default: always true.
   */
  canSchedule?: () => boolean;
  /**
   * Deterministic mode (`run.deterministic`): one batch at a time. The next batch is planned once the
   * previous one finished and starts only when this says so (the trainer has taken the previous one);
   * with it, `lookahead` is 1.
   */
  mayStartBatch?: () => boolean;
  /**
   * Which start of the run this is: 0 the first, k the k-th `--resume` (default 0). A resumed run plans
   * the same slots again; its episode ids carry `-r<k>`, so none repeats an id the episode store holds.
   */
  session?: number;
}

/**
 * The cocktail scheduler: mixes tasks of several environments into batches with exact quotas, expands
 * each task into a group, registers every episode attempt with the server's episode store, and routes it
 * to a connected client that has exactly that environment version, spreading by free capacity. A client
 * whose socket closes, or that goes silent past its lease, loses its episodes: they are aborted in the store (which discards their partial
 * records) and retried elsewhere under a new episode id, so a result can never count twice.
 *
 * This class wires the parts: the client directory and its leases (`client-directory.ts`), batch
 * planning (`batch-planner.ts`), dispatch and retries (`dispatcher.ts`) and evaluation runs
 * (`evaluation-runs.ts`); the records they share are in `slots.ts`.
 */
export class Scheduler {
  readonly #registry: EpisodeRegistry;
  readonly #now: () => number;
  readonly #leaseMs: number;
  readonly #heartbeatMs: number;
  readonly #evalEvery: number;
  readonly #lanes: EnvLane[];
  readonly #clients: ClientDirectory;
  readonly #planner: BatchPlanner;
  readonly #dispatcher: Dispatcher;
  readonly #evals: EvaluationRuns;
  readonly #waiting: WaitingEnvironments;
  readonly #listeners = new Set<(e: SchedulerEvent) => void>();
  readonly #counters: Counters = { assigned: 0, ended: 0, aborted: 0, lost: 0, retried: 0, failedGroups: 0, staleResults: 0, batchesCompleted: 0 };
  #closed = false;
  #timer: NodeJS.Timeout | null = null;
  #unsubscribe: (() => void) | null = null;

  private constructor(o: SchedulerOptions, tasks: Task[][]) {
    this.#registry = o.registry;
    this.#now = o.now ?? Date.now;
    this.#leaseMs = o.leaseMs ?? 30_000;
    this.#heartbeatMs = o.heartbeatMs ?? Math.max(1, Math.floor(this.#leaseMs / 3));
    this.#evalEvery = o.eval?.every ?? 0;
    const state = o.state;
    const seatsFor = (env: SchedulerEnvironment, task: Task): Seats => resolveSeats(env.name, seatsOf(task, env.agents), env.roles, o);
    this.#lanes = o.environments.map((config, index) => {
      checkRoleTargets(config.name, config.roles, o);
      // Every training task's seats must resolve now, not when its episode is due.
      for (const task of tasks[index]!) seatsFor(config, task);
      return {
        index,
        config,
        stream: new TaskStream(tasks[index]!, o.seed, config.name, state?.streams[config.name]),
        queue: new Deque<Slot>(),
        clients: new Set(),
      };
    });
    const newSlot: NewSlot = (id, env, task, purpose, group, evalRun) => ({
      id,
      env,
      task,
      seats: seatsFor(env.config, task),
      seed: deriveSeed(o.seed, id),
      purpose,
      group,
      evalRun,
      attempt: 0,
      tries: 0,
      episodeId: null,
      state: "queued",
      client: null,
      failures: [],
      result: null,
    });
    this.#clients = new ClientDirectory(this.#lanes);
    this.#waiting = new WaitingEnvironments(this.#lanes, o.waitingReportMs ?? 10_000, (e) => this.#emit(e));
    const baseUrl = o.baseUrl;
    this.#dispatcher = new Dispatcher({
      registry: o.registry,
      clients: this.#clients,
      lanes: this.#lanes,
      counters: this.#counters,
      baseUrl: typeof baseUrl === "string" ? () => baseUrl : baseUrl,
      sessionTag: o.session ? `-r${o.session}` : "",
      infraRetries: o.infraRetries,
      running: () => !this.#closed && this.#timer !== null,
      canSchedule: o.canSchedule ?? (() => true),
      ...(o.mayStartBatch ? { mayStartBatch: o.mayStartBatch } : {}),
      beforePump: () => this.#planner.plan(this.#closed),
      settle: (slot) => this.#settle(slot),
      emit: (e) => this.#emit(e),
      ...(o.groupScorer ? { groupScorer: o.groupScorer } : {}),
      ...(o.now ? { now: o.now } : {}),
    });
    this.#planner = new BatchPlanner(
      {
        batchTasks: o.batchTasks,
        groupSize: o.groupSize,
        lookahead: o.mayStartBatch ? 1 : Math.max(1, o.lookahead ?? 2),
        replaceFailedGroups: o.replaceFailedGroups ?? true,
        ...(o.mixStep ? { mixStep: o.mixStep } : {}),
        ...(o.maxBatches !== undefined ? { maxBatches: o.maxBatches } : {}),
        ...(state !== undefined ? { state } : {}),
      },
      this.#lanes,
      {
        newSlot,
        counters: this.#counters,
        cancel: (slot, why) => this.#dispatcher.cancel(slot, why),
        onGroupFailed: (failed) => this.#emit({ type: "group-failed", ...failed }),
        onBatch: (batch) => {
          this.#emit({ type: "batch", batch });
          if (this.#evalEvery > 0 && this.#counters.batchesCompleted % this.#evalEvery === 0) void this.evaluate();
        },
      },
    );
    this.#evals = new EvaluationRuns(this.#lanes, {
      loadTasks: o.loadTasks,
      checkSeats: (lane, task) => void seatsFor(lane.config, task),
      newSlot,
      defaults: { split: o.eval?.split ?? "test", tasks: o.eval?.tasks ?? 16 },
      runs: state?.evalRuns ?? 0,
    });
  }

  /** Loads every environment's training tasks, checks the role mapping, and returns a stopped scheduler. */
  static async create(options: SchedulerOptions): Promise<Scheduler> {
    // A step where every share is 0 plans empty batches, each finished at once: planning would never stop.
    const zero = allZeroStep(options.environments.map((e) => e.weight));
    if (zero !== null) throw new NoWeightError(zero);
    if (options.state !== undefined) {
      const parsed = SchedulerStateSchema.safeParse(options.state);
      if (!parsed.success) throw new BadStateError("scheduler state does not match its schema", parsed.error);
    }
    const tasks = await Promise.all(
      options.environments.map(async (e) => {
        const list = await options.loadTasks(e.name, e.split);
        if (list.length === 0) throw new NoTasksError(e.name, e.split);
        return list;
      }),
    );
    return new Scheduler(options, tasks);
  }

  /** Starts the lease clock and planning. */
  start(): void {
    if (this.#timer) return;
    this.#closed = false;
    this.#unsubscribe = this.#registry.subscribe?.((event) => this.#onRegistryEvent(event)) ?? null;
    this.#timer = setInterval(() => this.#checkLeases(), Math.max(10, Math.min(1000, Math.floor(this.#leaseMs / 4))));
    this.#timer.unref();
    this.#dispatcher.pump();
  }

  /** Stops the clock and aborts whatever is in flight (their keys stop working). */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    const aborts = this.#dispatcher.abortAll("scheduler closed");
    this.#clients.closeAll();
    await aborts;
  }

  subscribe(listener: (event: SchedulerEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** How often clients are told to heart-beat, and the lease. */
  timing(): { heartbeatMs: number; leaseMs: number } {
    return { heartbeatMs: this.#heartbeatMs, leaseMs: this.#leaseMs };
  }

  /** A client said hello (first time, or again after a reconnect): sends its welcome, then cancels for episodes it lost. */
  connect(hello: Hello, link: ClientLink): void {
    // A hello on the client's live socket re-announces its environments (a hot swap): it has not
    // restarted, and an episode it does not list yet may be an assignment still on the wire.
    const reannounce = this.#clients.get(hello.clientId)?.link === link;
    const { client, isReconnect } = this.#clients.connect(hello, link, this.#now());
    const running = new Set(hello.running);
    const resumed: string[] = [];
    for (const slot of [...client.slots]) {
      if (slot.episodeId !== null && running.has(slot.episodeId) && slot.state === "running") resumed.push(slot.episodeId);
      else if (slot.state === "running" && !reannounce) this.#dispatcher.failAttempt(slot, { kind: "client-lost", message: "the client restarted without it" });
    }
    link.send({ type: "welcome", clientId: client.id, heartbeatMs: this.#heartbeatMs, leaseMs: this.#leaseMs, resumed });
    const held = new Set(resumed);
    for (const id of running) if (!held.has(id)) link.send({ type: "cancel", episodeId: id, reason: "lease lost; re-run elsewhere" });
    this.#emit({ type: "client", clientId: client.id, status: isReconnect ? "reconnected" : "connected" });
    this.#waiting.clientConnected(this.#now());
    this.#waiting.check(this.#now());
    const mismatch = describeMismatch(this.#lanes.map((l) => l.config), hello.envs);
    if (mismatch) {
      link.send({ type: "error", code: ENV_MISMATCH_CODE, message: mismatch });
      this.#emit({ type: "env-mismatch", clientId: client.id, message: mismatch });
    }
    queueMicrotask(() => this.#dispatcher.pump());
  }

  /**
   * The socket closed: its episodes are re-queued at once (a dead client costs nothing), and a client
   * that reconnects is told to cancel them. Its lease still runs, so it keeps its id and counters.
   */
  disconnect(clientId: string, link: ClientLink): void {
    const client = this.#clients.disconnect(clientId, link, this.#now());
    if (!client) return;
    for (const slot of [...client.slots]) {
      if (slot.state === "running" || slot.state === "starting") {
        this.#dispatcher.failAttempt(slot, { kind: "client-lost", message: `the connection of '${clientId}' closed` });
      }
    }
    this.#emit({ type: "client", clientId, status: "disconnected" });
    this.#dispatcher.pump();
    this.#waiting.check(this.#now());
  }

  /** A message from a connected client (after hello). */
  handle(clientId: string, message: ParsedClientMessage): void {
    const client = this.#clients.get(clientId);
    if (!client) {
      // A client whose lease ran out: its episodes were re-queued, so its results are stale.
      if (message.type === "end" || message.type === "abort") this.#counters.staleResults += 1;
      return;
    }
    this.#clients.seen(client, this.#now());
    switch (message.type) {
      case "hello":
        return;
      case "heartbeat":
        return this.#dispatcher.heartbeat(client, message.running);
      case "end":
        return void this.#dispatcher.end(client, message.episodeId, message.rewards, message.info, message.code);
      case "abort":
        return this.#dispatcher.abort(client, message.episodeId, message.reason);
      case "agree_sync":
        return this.#emit({ type: "agree-sync", clientId });
    }
  }

  /** Schedules evaluation episodes (one per task) beside training; they never enter a batch. */
  evaluate(request: EvalRequest = {}): Promise<EvalReport> {
    return this.#evals.start(request, this.#counters.batchesCompleted, () => this.#dispatcher.pump());
  }

  /** Serialisable state for `--resume`: planning from the oldest unfinished batch, with which of its groups completed. */
  snapshot(): SchedulerState {
    return this.#planner.snapshot(this.#evals.started());
  }

  /** True while a started training batch has groups still running (deterministic mode trains between batches only). */
  batchInProgress(): boolean {
    return this.#planner.inProgress();
  }

  /**
   * Training episodes that ended on their clients and wait, claims open, for their group's scorer (a
   * group judge): they make no more calls, so a weight update's drain must not wait for them (their group
   * mates cannot start while claims are paused).
   */
  heldForScoring(): ReadonlySet<string> {
    return this.#dispatcher.heldForScoring();
  }

  /** Environments whose episodes wait for a client that can run them, as reported (`env-waiting`). */
  waiting(): WaitingEnvironment[] {
    return this.#waiting.list(this.#now());
  }

  stats(): SchedulerStats {
    let queued = 0;
    for (const e of this.#lanes) queued += e.queue.size;
    return { ...this.#clients.count(), queued, inFlight: this.#dispatcher.inFlight(), ...this.#counters };
  }

  #settle(slot: Slot): void {
    if (slot.evalRun) {
      const report = this.#evals.settle(slot);
      if (report) this.#emit({ type: "eval", report });
      return;
    }
    this.#planner.settle(slot);
    queueMicrotask(() => this.#dispatcher.pump());
  }

  #checkLeases(): void {
    this.#dispatcher.unpause();
    for (const { client, silentFor } of this.#clients.expire(this.#now(), this.#leaseMs)) {
      for (const slot of [...client.slots]) this.#dispatcher.failAttempt(slot, { kind: "client-lost", message: `no heartbeat from '${client.id}' for ${silentFor} ms` });
      this.#emit({ type: "client", clientId: client.id, status: "lost" });
    }
    this.#dispatcher.pump();
    this.#waiting.check(this.#now());
  }

  #onRegistryEvent(event: RegistryEvent): void {
    if (event.type === "claims-resumed") {
      this.#dispatcher.unpause();
      this.#dispatcher.pump();
      return;
    }
    this.#dispatcher.reclaimed(event.episodeId, event.kind);
  }

  #emit(event: SchedulerEvent): void {
    for (const l of this.#listeners) l(event);
  }
}
