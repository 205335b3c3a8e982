import type { Task } from "../../sdk/env/protocol.ts";
import type { EnvAnnouncement, ParsedClientMessage, ServerMessage } from "../../sdk/swarm/protocol.ts";
import { Deque } from "./deque.ts";
import { BadStateError, NoTasksError } from "./errors.ts";
import { type MixLedger, planQuotas, sharesAt } from "./mixing.ts";
import type { AbortReason, ClaimOutcome, EpisodeRegistry, LoadTasks, RegistryEvent } from "./port.ts";
import { checkRoleTargets, resolveSeats, type Seats, seatsOf } from "./resolve-seats.ts";
import { deriveSeed } from "./rng.ts";
import { type SchedulerState, type SchedulerStateInput, SchedulerStateSchema } from "./state.ts";
import { TaskStream, type TaskStreamPosition } from "./task-stream.ts";
import type {
  BatchReport,
  EpisodeResult,
  EvalEnvReport,
  EvalReport,
  EvalRequest,
  GroupReport,
  SchedulerEnvironment,
  SchedulerEvent,
  SchedulerStats,
} from "./types.ts";

export interface SchedulerOptions {
  environments: readonly SchedulerEnvironment[];
  /** Names of the trainable policies and of the frozen models (to resolve role targets). */
  policies: readonly string[];
  frozen: readonly string[];
  loadTasks: LoadTasks;
  registry: EpisodeRegistry;
  /** The OpenAI base URL agents call (the swarm server's, ending in /v1); a function when the port is known only after listen. */
  baseUrl: string | (() => string);
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
  /** A failed group is replaced by another task of the same environment, so the quota holds (default true). */
  replaceFailedGroups?: boolean;
  /** Evaluate every K completed batches (config `eval`); disabled when `every` is 0 or absent. */
  eval?: { every: number; split: string; tasks: number };
  /** State from `snapshot()` of an earlier run (`--resume`). */
  state?: SchedulerStateInput;
  /**
   * Which start of the run this is: 0 the first, k the k-th `--resume` (default 0). A resumed run plans
   * the same slots again; its episode ids carry `-r<k>`, so none repeats an id the episode store holds.
   */
  session?: number;
}

/** How the scheduler talks to one connected client (the swarm plugin gives one per socket). */
export interface ClientLink {
  send(message: ServerMessage): void;
  close(): void;
}

type Hello = Extract<ParsedClientMessage, { type: "hello" }>;

interface EnvSlot {
  index: number;
  config: SchedulerEnvironment;
  stream: TaskStream;
  queue: Deque<Slot>;
  clients: Set<ClientState>;
}

interface Group {
  id: string;
  env: EnvSlot;
  task: Task;
  batch: Batch;
  slots: Slot[];
  status: "running" | "complete" | "failed";
  failures: AbortReason[];
}

interface Batch {
  index: number;
  quotas: number[];
  groups: Group[];
  replacements: number;
  /** Stream positions and ledger before this batch was planned (for `snapshot`). */
  before: { streams: TaskStreamPosition[]; ledger: MixLedger };
}

interface EvalRun {
  id: number;
  step: number;
  split: string;
  envs: EnvSlot[];
  slots: Slot[];
  pending: number;
  resolve: (report: EvalReport) => void;
}

interface Slot {
  id: string;
  env: EnvSlot;
  task: Task;
  /** Who plays each seat of this task. */
  seats: Seats;
  seed: number;
  purpose: "train" | "eval";
  group: Group | null;
  evalRun: EvalRun | null;
  /** Failed tries so far. */
  attempt: number;
  /** Registrations so far: each gets a fresh episode id, so a stale result can never match. */
  tries: number;
  episodeId: string | null;
  state: "queued" | "starting" | "running" | "done" | "failed";
  client: ClientState | null;
  failures: AbortReason[];
  result: EpisodeResult | null;
}

interface ClientState {
  id: string;
  link: ClientLink | null;
  envs: EnvSlot[];
  concurrency: number;
  slots: Set<Slot>;
  lastSeen: number;
  disconnectedAt: number | null;
}

/**
 * The cocktail scheduler: mixes tasks of several environments into batches with exact quotas, expands
 * each task into a group, registers every episode attempt with the server's episode store, and routes it
 * to a connected client that has exactly that environment version, spreading by free capacity. A client
 * that goes silent loses its episodes: they are aborted in the store (which discards their partial
 * records) and retried elsewhere under a new episode id, so a result can never count twice.
 */
export class Scheduler {
  readonly #o: Required<Omit<SchedulerOptions, "state" | "maxBatches" | "eval" | "session">> & Pick<SchedulerOptions, "maxBatches" | "eval">;
  /** `-r<k>` for the k-th resume, "" for the first start. */
  readonly #sessionTag: string;
  readonly #envs: EnvSlot[];
  readonly #clients = new Map<string, ClientState>();
  readonly #byEpisode = new Map<string, Slot>();
  readonly #batches: Batch[] = [];
  readonly #listeners = new Set<(e: SchedulerEvent) => void>();
  readonly #evalTasks = new Map<string, Task[]>();
  #ledger: MixLedger;
  #nextBatch: number;
  #evalRuns: number;
  /** Groups of the resumed batches that had completed before the interruption: planned as complete. */
  readonly #resumedDone: ReadonlySet<string>;
  #paused = false;
  #pumping = false;
  #closed = false;
  #timer: NodeJS.Timeout | null = null;
  #unsubscribe: (() => void) | null = null;
  readonly #stats = { assigned: 0, ended: 0, aborted: 0, lost: 0, retried: 0, failedGroups: 0, staleResults: 0, batchesCompleted: 0 };

  private constructor(options: SchedulerOptions, tasks: Task[][]) {
    const leaseMs = options.leaseMs ?? 30_000;
    this.#o = {
      environments: options.environments,
      policies: options.policies,
      frozen: options.frozen,
      loadTasks: options.loadTasks,
      registry: options.registry,
      baseUrl: options.baseUrl,
      batchTasks: options.batchTasks,
      groupSize: options.groupSize,
      infraRetries: options.infraRetries,
      seed: options.seed,
      lookahead: Math.max(1, options.lookahead ?? 2),
      leaseMs,
      heartbeatMs: options.heartbeatMs ?? Math.max(1, Math.floor(leaseMs / 3)),
      replaceFailedGroups: options.replaceFailedGroups ?? true,
      ...(options.maxBatches !== undefined ? { maxBatches: options.maxBatches } : {}),
      ...(options.eval !== undefined ? { eval: options.eval } : {}),
    };
    const state = options.state;
    this.#envs = options.environments.map((config, index) => {
      checkRoleTargets(config.name, config.roles, options);
      // Every training task's seats must resolve now, not when its episode is due.
      for (const task of tasks[index]!) this.#seats(config, task);
      return {
        index,
        config,
        stream: new TaskStream(tasks[index]!, options.seed, config.name, state?.streams[config.name]),
        queue: new Deque<Slot>(),
        clients: new Set<ClientState>(),
      };
    });
    this.#ledger = {
      target: this.#envs.map((e) => state?.ledger[e.config.name]?.target ?? 0),
      given: this.#envs.map((e) => state?.ledger[e.config.name]?.given ?? 0),
    };
    this.#nextBatch = state?.nextBatch ?? 0;
    this.#resumedDone = new Set(state?.doneGroups ?? []);
    this.#evalRuns = state?.evalRuns ?? 0;
    this.#sessionTag = options.session ? `-r${options.session}` : "";
  }

  /** Loads every environment's training tasks, checks the role mapping, and returns a stopped scheduler. */
  static async create(options: SchedulerOptions): Promise<Scheduler> {
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
    this.#unsubscribe = this.#o.registry.subscribe?.((event) => this.#onRegistryEvent(event)) ?? null;
    this.#timer = setInterval(() => this.#checkLeases(), Math.max(10, Math.min(1000, Math.floor(this.#o.leaseMs / 4))));
    this.#timer.unref();
    this.#pump();
  }

  /** Stops the clock and aborts whatever is in flight (their keys stop working). */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    const aborts: Array<Promise<void> | void> = [];
    for (const slot of this.#byEpisode.values()) {
      if (slot.episodeId) aborts.push(this.#safeAbort(slot.episodeId, { kind: "client-lost", message: "scheduler closed" }));
    }
    this.#byEpisode.clear();
    for (const c of this.#clients.values()) c.link?.close();
    this.#clients.clear();
    await Promise.all(aborts);
  }

  subscribe(listener: (event: SchedulerEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** How often clients are told to heart-beat, and the lease. */
  timing(): { heartbeatMs: number; leaseMs: number } {
    return { heartbeatMs: this.#o.heartbeatMs, leaseMs: this.#o.leaseMs };
  }

  // ---- clients ------------------------------------------------------------------------------------

  /** A client said hello (first time, or again after a reconnect): sends its welcome, then cancels for episodes it lost. */
  connect(hello: Hello, link: ClientLink): void {
    const now = Date.now();
    let client = this.#clients.get(hello.clientId);
    const isReconnect = client !== undefined;
    if (client?.link && client.link !== link) client.link.close();
    if (!client) {
      client = { id: hello.clientId, link, envs: [], concurrency: hello.concurrency, slots: new Set(), lastSeen: now, disconnectedAt: null };
      this.#clients.set(client.id, client);
    }
    for (const e of client.envs) e.clients.delete(client);
    client.link = link;
    client.concurrency = hello.concurrency;
    client.lastSeen = now;
    client.disconnectedAt = null;
    client.envs = this.#envs.filter((e) => hello.envs.some((a) => this.#matches(e.config, a)));
    for (const e of client.envs) e.clients.add(client);

    const running = new Set(hello.running);
    const resumed: string[] = [];
    for (const slot of [...client.slots]) {
      if (slot.episodeId !== null && running.has(slot.episodeId) && slot.state === "running") resumed.push(slot.episodeId);
      else if (slot.state === "running") this.#failAttempt(slot, { kind: "client-lost", message: "the client restarted without it" });
    }
    link.send({ type: "welcome", clientId: client.id, heartbeatMs: this.#o.heartbeatMs, leaseMs: this.#o.leaseMs, resumed });
    const held = new Set(resumed);
    for (const id of running) if (!held.has(id)) link.send({ type: "cancel", episodeId: id, reason: "lease lost; re-run elsewhere" });
    this.#emit({ type: "client", clientId: client.id, status: isReconnect ? "reconnected" : "connected" });
    queueMicrotask(() => this.#pump());
  }

  /** The socket closed. The client keeps its episodes for the lease, in case it reconnects. */
  disconnect(clientId: string, link: ClientLink): void {
    const client = this.#clients.get(clientId);
    if (!client || client.link !== link) return;
    client.link = null;
    client.disconnectedAt = Date.now();
    this.#emit({ type: "client", clientId, status: "disconnected" });
  }

  /** A message from a connected client (after hello). */
  handle(clientId: string, message: ParsedClientMessage): void {
    const client = this.#clients.get(clientId);
    if (!client) {
      // A client whose lease ran out: its episodes were re-queued, so its results are stale.
      if (message.type === "end" || message.type === "abort") this.#stats.staleResults += 1;
      return;
    }
    client.lastSeen = Date.now();
    switch (message.type) {
      case "hello":
        return;
      case "heartbeat":
        for (const id of message.running) {
          const slot = this.#byEpisode.get(id);
          if (slot?.client === client && slot.state === "running") this.#o.registry.heartbeat(id);
        }
        return;
      case "end":
        return void this.#onEnd(client, message.episodeId, message.rewards, message.info);
      case "abort":
        return void this.#onAbort(client, message.episodeId, message.reason);
      case "agree_sync":
        return this.#emit({ type: "agree-sync", clientId });
    }
  }

  // ---- evaluation ---------------------------------------------------------------------------------

  /** Schedules evaluation episodes (one per task) beside training; they never enter a batch. */
  async evaluate(request: EvalRequest = {}): Promise<EvalReport> {
    const split = request.split ?? this.#o.eval?.split ?? "test";
    const count = request.tasks ?? this.#o.eval?.tasks ?? 16;
    const envs = this.#envs.filter((e) => !request.envs || request.envs.includes(e.config.name));
    const lists = await Promise.all(envs.map((e) => this.#evalTasksOf(e, split)));
    const id = this.#evalRuns++;
    return new Promise<EvalReport>((resolve) => {
      const run: EvalRun = { id, step: this.#stats.batchesCompleted, split, envs, slots: [], pending: 0, resolve };
      envs.forEach((env, i) => {
        for (const task of lists[i]!.slice(0, count)) {
          const slot = this.#newSlot(`v${id}-${env.config.name}-${task.id}`, env, task, "eval", null, run);
          run.slots.push(slot);
          env.queue.push(slot);
        }
      });
      run.pending = run.slots.length;
      if (run.pending === 0) resolve(this.#evalReport(run));
      else this.#pump();
    });
  }

  async #evalTasksOf(env: EnvSlot, split: string): Promise<Task[]> {
    const key = `${env.config.name}\u0000${split}`;
    let list = this.#evalTasks.get(key);
    if (!list) {
      list = await this.#o.loadTasks(env.config.name, split);
      for (const task of list) this.#seats(env.config, task);
      this.#evalTasks.set(key, list);
    }
    return list;
  }

  // ---- state --------------------------------------------------------------------------------------

  /** Serialisable state for `--resume`: planning from the oldest unfinished batch, with which of its groups completed. */
  snapshot(): SchedulerState {
    const oldest = this.#batches[0];
    const streams = oldest ? oldest.before.streams : this.#envs.map((e) => e.stream.position());
    const ledger = oldest ? oldest.before.ledger : this.#ledger;
    return {
      version: 1,
      nextBatch: oldest ? oldest.index : this.#nextBatch,
      streams: Object.fromEntries(this.#envs.map((e, i) => [e.config.name, streams[i]!])),
      ledger: Object.fromEntries(this.#envs.map((e, i) => [e.config.name, { target: ledger.target[i]!, given: ledger.given[i]! }])),
      evalRuns: this.#evalRuns,
      doneGroups: this.#batches.flatMap((b) => b.groups.filter((g) => g.status === "complete").map((g) => g.id)),
      partialEpisodes: this.#batches.flatMap((b) =>
        b.groups.filter((g) => g.status !== "complete").flatMap((g) => g.slots.flatMap((s) => (s.result ? [s.result.episodeId] : []))),
      ),
    };
  }

  stats(): SchedulerStats {
    let queued = 0;
    for (const e of this.#envs) queued += e.queue.size;
    let connected = 0;
    for (const c of this.#clients.values()) if (c.link) connected += 1;
    return { clients: this.#clients.size, connected, queued, inFlight: this.#byEpisode.size, ...this.#stats };
  }

  // ---- planning -----------------------------------------------------------------------------------

  #maybePlan(): void {
    while (
      !this.#closed &&
      this.#batches.length < this.#o.lookahead &&
      (this.#o.maxBatches === undefined || this.#nextBatch < this.#o.maxBatches)
    ) {
      this.#planBatch();
    }
  }

  #planBatch(): void {
    const index = this.#nextBatch++;
    const before = { streams: this.#envs.map((e) => e.stream.position()), ledger: this.#ledger };
    const shares = sharesAt(this.#envs.map((e) => e.config.weight), index);
    const { quotas, ledger } = planQuotas(this.#ledger, shares, this.#o.batchTasks);
    this.#ledger = ledger;
    const batch: Batch = { index, quotas, groups: [], replacements: 0, before };
    this.#batches.push(batch);
    this.#envs.forEach((env, i) => {
      for (let k = 0; k < quotas[i]!; k++) this.#addGroup(batch, env, true);
    });
    if (batch.groups.every((g) => g.status !== "running")) this.#finishBatches();
  }

  #addGroup(batch: Batch, env: EnvSlot, planned = false): void {
    const task = env.stream.next();
    const g = batch.groups.length;
    const group: Group = { id: `${batch.index}:${g}`, env, task, batch, slots: [], status: "running", failures: [] };
    if (planned && this.#resumedDone.has(group.id)) {
      // Its episodes finished before the interruption and wait in the sample pool: not played again.
      group.status = "complete";
      batch.groups.push(group);
      return;
    }
    for (let m = 0; m < this.#o.groupSize; m++) {
      const slot = this.#newSlot(`b${batch.index}-g${g}-m${m}`, env, task, "train", group, null);
      group.slots.push(slot);
      env.queue.push(slot);
    }
    batch.groups.push(group);
  }

  #newSlot(id: string, env: EnvSlot, task: Task, purpose: "train" | "eval", group: Group | null, evalRun: EvalRun | null): Slot {
    return {
      id,
      env,
      task,
      seats: this.#seats(env.config, task),
      seed: deriveSeed(this.#o.seed, id),
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
    };
  }

  // ---- dispatch -----------------------------------------------------------------------------------

  #pump(): void {
    if (this.#pumping || this.#closed || !this.#timer) return;
    this.#pumping = true;
    try {
      this.#maybePlan();
      if (this.#paused) return;
      for (;;) {
        let best: { env: EnvSlot; slot: Slot; seq: number } | null = null;
        for (const env of this.#envs) {
          let head = env.queue.peek();
          while (head && head.state !== "queued") {
            env.queue.shift();
            head = env.queue.peek();
          }
          if (!head || !this.#hasFreeClient(env)) continue;
          const seq = head.failures.length > 0 ? -1 : this.#seqOf(head);
          if (!best || seq < best.seq) best = { env, slot: head, seq };
        }
        if (!best) return;
        best.env.queue.shift();
        const client = this.#pickClient(best.env)!;
        void this.#assign(best.slot, client);
      }
    } finally {
      this.#pumping = false;
    }
  }

  #seqOf(slot: Slot): number {
    return slot.evalRun ? -0.5 : (slot.group?.batch.index ?? 0);
  }

  #hasFreeClient(env: EnvSlot): boolean {
    for (const c of env.clients) if (c.link && c.slots.size < c.concurrency) return true;
    return false;
  }

  #pickClient(env: EnvSlot): ClientState | null {
    let best: ClientState | null = null;
    let bestFree = 0;
    for (const c of env.clients) {
      if (!c.link) continue;
      const free = c.concurrency - c.slots.size;
      if (free > bestFree) {
        best = c;
        bestFree = free;
      }
    }
    return best;
  }

  async #assign(slot: Slot, client: ClientState): Promise<void> {
    const attempt = slot.attempt;
    const episodeId = `${slot.id}${this.#sessionTag}-t${slot.tries++}`;
    slot.state = "starting";
    slot.client = client;
    slot.episodeId = episodeId;
    client.slots.add(slot);
    this.#byEpisode.set(episodeId, slot);
    const env = slot.env;
    let claim: ClaimOutcome;
    try {
      await this.#o.registry.register({
        episodeId,
        env: env.config.name,
        envVersion: env.config.version,
        taskId: slot.task.id,
        groupId: slot.group?.id ?? slot.id,
        purpose: slot.purpose,
        agents: slot.seats.agents,
      });
      claim = await this.#o.registry.claim(episodeId, client.id);
    } catch (err) {
      if (slot.episodeId === episodeId && slot.state === "starting") {
        this.#failAttempt(slot, { kind: "protocol", message: `registering the episode failed: ${String(err)}` });
      }
      return;
    }
    if (slot.episodeId !== episodeId || slot.state !== "starting" || this.#closed) {
      if (slot.episodeId !== episodeId) await this.#safeAbort(episodeId, { kind: "client-lost", message: "lease lost while starting" });
      return;
    }
    if (claim.kind === "paused") {
      // Claims are paused for a weight sync: put it back in front, untouched, and wait for the resume.
      await this.#safeAbort(episodeId, { kind: "client-lost", message: "claims paused" });
      this.#release(slot);
      slot.state = "queued";
      env.queue.unshift(slot);
      this.#paused = true;
      return;
    }
    if (!client.link) {
      this.#failAttempt(slot, { kind: "client-lost", message: "the client disconnected before the assignment" });
      return;
    }
    slot.state = "running";
    this.#stats.assigned += 1;
    const agents: Record<string, { baseUrl: string; apiKey: string; model: string; role: string }> = {};
    const baseUrl = (typeof this.#o.baseUrl === "string" ? this.#o.baseUrl : this.#o.baseUrl()).replace(/\/+$/, "");
    for (const { agentId, role, target } of slot.seats.agents) {
      agents[agentId] = { baseUrl, apiKey: claim.keys[agentId] ?? "", model: target.name, role };
    }
    client.link.send({
      type: "assign",
      episode: {
        episodeId,
        env: { name: env.config.name, version: env.config.version },
        task: slot.task,
        seed: slot.seed,
        agents,
        builtinAgents: slot.seats.builtin,
        maxTurns: env.config.maxTurns,
        purpose: slot.purpose,
        attempt,
      },
    });
  }

  #seats(env: SchedulerEnvironment, task: Task): Seats {
    return resolveSeats(env.name, seatsOf(task, env.agents), env.roles, this.#o);
  }

  #release(slot: Slot): void {
    if (slot.episodeId) this.#byEpisode.delete(slot.episodeId);
    slot.client?.slots.delete(slot);
    slot.client = null;
    slot.episodeId = null;
  }

  // ---- results ------------------------------------------------------------------------------------

  async #onEnd(client: ClientState, episodeId: string, rewards: Record<string, number>, info: Record<string, unknown>): Promise<void> {
    const slot = this.#byEpisode.get(episodeId);
    if (!slot || slot.client !== client || slot.state !== "running") {
      this.#stats.staleResults += 1;
      return;
    }
    const result: EpisodeResult = { episodeId, attempt: slot.attempt, clientId: client.id, rewards, info };
    slot.state = "done";
    slot.result = result;
    this.#release(slot);
    this.#stats.ended += 1;
    try {
      await this.#o.registry.end(episodeId, rewards, info);
    } catch (err) {
      slot.state = "queued";
      slot.result = null;
      this.#stats.ended -= 1;
      this.#retryOrFail(slot, { kind: "protocol", message: `ending the episode failed: ${String(err)}` }, episodeId, client.id);
      this.#pump();
      return;
    }
    const trained = Object.fromEntries(slot.seats.agents.filter((a) => a.target.kind === "policy").map((a) => [a.agentId, a.role]));
    this.#emit({ type: "episode-end", env: slot.env.config.name, taskId: slot.task.id, purpose: slot.purpose, trained, result });
    this.#settle(slot);
    this.#pump();
  }

  #onAbort(client: ClientState, episodeId: string, reason: AbortReason): void {
    const slot = this.#byEpisode.get(episodeId);
    if (!slot || slot.client !== client || slot.state !== "running") {
      this.#stats.staleResults += 1;
      return;
    }
    this.#failAttempt(slot, reason);
    this.#pump();
  }

  /** Ends the current attempt without a result: abort it in the store, then retry or give up. */
  #failAttempt(slot: Slot, reason: AbortReason): void {
    const episodeId = slot.episodeId ?? slot.id;
    const clientId = slot.client?.id ?? null;
    if (slot.episodeId) void this.#safeAbort(slot.episodeId, reason);
    this.#release(slot);
    this.#stats.aborted += 1;
    if (reason.kind === "client-lost") this.#stats.lost += 1;
    this.#retryOrFail(slot, reason, episodeId, clientId);
  }

  #retryOrFail(slot: Slot, reason: AbortReason, episodeId: string, clientId: string | null): void {
    slot.failures.push(reason);
    const willRetry = slot.failures.length <= this.#o.infraRetries && !this.#closed;
    this.#emit({ type: "episode-abort", episodeId, clientId, reason, willRetry });
    if (willRetry) {
      slot.attempt += 1;
      slot.state = "queued";
      this.#stats.retried += 1;
      slot.env.queue.unshift(slot);
      return;
    }
    slot.state = "failed";
    this.#settle(slot);
  }

  async #safeAbort(episodeId: string, reason: AbortReason): Promise<void> {
    try {
      await this.#o.registry.abort(episodeId, reason);
    } catch {
      // Already gone from the store (reclaimed, ended): nothing left to discard.
    }
  }

  /** A slot reached done or failed: settle its group or eval run. */
  #settle(slot: Slot): void {
    if (slot.evalRun) {
      const run = slot.evalRun;
      run.pending -= 1;
      if (run.pending === 0) {
        const report = this.#evalReport(run);
        run.resolve(report);
        this.#emit({ type: "eval", report });
      }
      return;
    }
    const group = slot.group!;
    if (group.status !== "running") return;
    if (slot.state === "failed") {
      group.status = "failed";
      group.failures = slot.failures;
      this.#stats.failedGroups += 1;
      for (const other of group.slots) {
        if (other === slot) continue;
        if (other.state === "running" || other.state === "starting") {
          const link = other.client?.link;
          if (link && other.episodeId) link.send({ type: "cancel", episodeId: other.episodeId, reason: "its group failed" });
          if (other.episodeId) void this.#safeAbort(other.episodeId, { kind: "client-lost", message: "its group failed" });
          this.#release(other);
        }
        if (other.state !== "done") other.state = "failed";
      }
      const batch = group.batch;
      if (this.#o.replaceFailedGroups && batch.replacements < this.#o.batchTasks) {
        batch.replacements += 1;
        this.#addGroup(batch, group.env);
      }
    } else if (group.slots.every((s) => s.state === "done")) {
      group.status = "complete";
    }
    this.#finishBatches();
  }

  /** Emits finished batches in step order and drops them (memory stays flat). */
  #finishBatches(): void {
    while (this.#batches.length > 0 && this.#batches[0]!.groups.every((g) => g.status !== "running")) {
      const batch = this.#batches.shift()!;
      this.#stats.batchesCompleted += 1;
      this.#emit({ type: "batch", batch: this.#batchReport(batch) });
      const every = this.#o.eval?.every ?? 0;
      if (every > 0 && this.#stats.batchesCompleted % every === 0) void this.evaluate();
    }
    queueMicrotask(() => this.#pump());
  }

  #batchReport(batch: Batch): BatchReport {
    const quotas: Record<string, number> = {};
    const filled: Record<string, number> = {};
    this.#envs.forEach((e, i) => {
      quotas[e.config.name] = batch.quotas[i]!;
      filled[e.config.name] = 0;
    });
    const groups: GroupReport[] = batch.groups.map((g) => {
      if (g.status === "complete") filled[g.env.config.name]! += 1;
      return {
        groupId: g.id,
        env: g.env.config.name,
        taskId: g.task.id,
        status: g.status === "complete" ? "complete" : "failed",
        episodes: g.slots.flatMap((s) => (s.result ? [s.result] : [])),
        failures: g.failures,
      };
    });
    return { step: batch.index, quotas, filled, groups, failedGroups: groups.filter((g) => g.status === "failed").length };
  }

  #evalReport(run: EvalRun): EvalReport {
    const perEnv: Record<string, EvalEnvReport> = {};
    for (const env of run.envs) {
      const slots = run.slots.filter((s) => s.env === env);
      const done = slots.filter((s) => s.result);
      const means = done.map((s) => {
        const trained = s.seats.agents.filter((a) => a.target.kind === "policy").map((a) => a.agentId);
        const ids = trained.length > 0 ? trained : Object.keys(s.result!.rewards);
        const rs = ids.map((id) => s.result!.rewards[id] ?? 0);
        return rs.length ? rs.reduce((a, b) => a + b, 0) / rs.length : 0;
      });
      perEnv[env.config.name] = {
        episodes: done.length,
        failed: slots.length - done.length,
        meanReward: means.length ? means.reduce((a, b) => a + b, 0) / means.length : Number.NaN,
        rewards: done.map((s) => ({ taskId: s.task.id, rewards: s.result!.rewards })),
        scores: means,
      };
    }
    return { id: run.id, step: run.step, split: run.split, perEnv };
  }

  // ---- leases and store events --------------------------------------------------------------------

  #checkLeases(): void {
    const now = Date.now();
    this.#paused = false;
    for (const client of [...this.#clients.values()]) {
      const silentFor = client.link ? now - client.lastSeen : now - (client.disconnectedAt ?? now);
      if (silentFor <= this.#o.leaseMs) continue;
      client.link?.close();
      for (const e of client.envs) e.clients.delete(client);
      this.#clients.delete(client.id);
      for (const slot of [...client.slots]) this.#failAttempt(slot, { kind: "client-lost", message: `no heartbeat from '${client.id}' for ${silentFor} ms` });
      this.#emit({ type: "client", clientId: client.id, status: "lost" });
    }
    this.#pump();
  }

  #onRegistryEvent(event: RegistryEvent): void {
    if (event.type === "claims-resumed") {
      this.#paused = false;
      this.#pump();
      return;
    }
    const slot = this.#byEpisode.get(event.episodeId);
    if (!slot || slot.state !== "running") return;
    const clientId = slot.client?.id ?? null;
    slot.client?.link?.send({ type: "cancel", episodeId: event.episodeId, reason: "reclaimed by the server after idling" });
    void this.#safeAbort(event.episodeId, { kind: "timeout", message: "reclaimed by the server after idling" });
    this.#release(slot);
    this.#stats.aborted += 1;
    this.#retryOrFail(slot, { kind: "timeout", message: "reclaimed by the server after idling" }, event.episodeId, clientId);
    this.#pump();
  }

  #matches(env: SchedulerEnvironment, a: EnvAnnouncement): boolean {
    return a.name === env.name && a.version === env.version && (env.hash === undefined || env.hash === a.hash);
  }

  #emit(event: SchedulerEvent): void {
    for (const l of this.#listeners) l(event);
  }
}
