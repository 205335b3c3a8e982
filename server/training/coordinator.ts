import { type StrategyName, selectBatch } from "./batching-strategies.ts";
import { ClientActivity } from "./client-activity.ts";
import { type AdvantageOptions, computeAdvantages } from "./compute-advantages.ts";
import { buildEpisodeSamples, groupKey } from "./episode-samples.ts";
import { type DroppedGroup, filterEqualRewardGroups } from "./filter-groups.ts";
import type { PoolOrder } from "./group-entries.ts";
import type { MergeOptions, MergeStats } from "./merge-timelines.ts";
import { addMergeStats, createMergeStats } from "./merge-timelines.ts";
import type { EndedEpisode, EpisodeStorePort, TrainerPort } from "./ports.ts";
import { measurePrefixSavings, type PrefixSavings } from "./prefix-tree.ts";
import type { Sample, TrainBatch, TrainMetrics } from "./sample.ts";
import { stalledGroups } from "./stalled-groups.ts";
import type { PoolEntry, SamplePool } from "./sample-pool.ts";

/** The run config's training parts (`batching`, `merging`, `advantage`, `server.syncTimeoutS`). */
export interface TrainingConfig {
  batching: {
    strategy: StrategyName;
    batchTasks: number;
    groupSize: number;
    maxCachedEpisodes: number;
    filterEqualRewards: boolean;
    clientIdleS: number;
    /** `planned` in deterministic mode: batches hold and order episodes by group, not by arrival. */
    order?: PoolOrder;
  };
  merging: MergeOptions & { prefixTree: boolean };
  advantage: AdvantageOptions;
  /** How long in-flight episodes may finish before a weight update abandons them. */
  syncTimeoutS: number;
}

export interface CoordinatorOptions {
  store: EpisodeStorePort;
  /** Trainable policies by name. Calls of other policies (frozen models) are not trained. */
  engines: Readonly<Record<string, TrainerPort>>;
  pool: SamplePool;
  config: TrainingConfig;
  /** Milliseconds clock (default `Date.now`). */
  now?: () => number;
  /** Waits between drain checks (default a real timer). */
  sleep?: (ms: number) => Promise<void>;
  /** Drain poll interval, ms (default 50). */
  drainPollMs?: number;
  /** `start()` re-checks the strategies this often so idle clients drop out, ms (default 1000; 0: never). */
  tickMs?: number;
  /** After a failed step, no new sync starts for this long, ms (default 30000), so a broken engine is not hammered. */
  failureBackoffMs?: number;
  /**
   * Deterministic mode: false while a batch is still being played, so a sync starts only between
   * batches (call `tick()` when one finishes). Default: a sync starts as soon as a batch is ready.
   */
  syncGate?: () => boolean;
  onStep?: (report: StepReport) => void;
  /**
   * The optimizer steps each policy gets (the run's `run.steps`): a policy whose weights reached this
   * version trains no further and pools nothing more, while the others catch up. Without it, a policy with
   * more episodes (werewolves' six villager seats against three wolves) trained more steps than the run
   * asked for while it waited for the slowest. Default: no limit.
   */
  maxSteps?: number;
  /**
   * After each sync's steps, before claims resume: nothing is in flight and the weights are still, so a
   * checkpoint taken here is consistent. Awaited.
   */
  onSync?: (reports: StepReport[]) => void | Promise<void>;
  onWarning?: (message: string) => void;
  onError?: (error: unknown) => void;
}

export interface StepReport {
  policy: string;
  /** Optimizer steps this coordinator has run for the policy, this one included. */
  step: number;
  outcome: "trained" | "no-signal" | "failed";
  versionBefore: number;
  versionAfter: number;
  episodes: number;
  /** The episodes trained on (after filtering): each leaves the pool with this step. */
  episodeIds: string[];
  samples: number;
  /** Groups (tasks) trained on. */
  groups: number;
  /** Groups trained on per environment: the step's mix, after filtering. */
  groupsPerEnv: Record<string, number>;
  droppedGroups: DroppedGroup[];
  /** In-flight episodes abandoned by this sync's drain. */
  abandoned: number;
  /** All tokens and tokens under the loss mask. */
  tokens: number;
  lossTokens: number;
  /** Oldest and newest weight version among the batch's generated tokens. */
  sampleVersions: { min: number; max: number };
  meanReward: number;
  metrics?: TrainMetrics;
  /** With `merging.prefixTree`: the batch's samples against one trie of them (the tree ideal the engine trains toward). */
  prefixTree?: PrefixSavings;
  error?: string;
}

export interface CoordinatorCounters {
  episodesPooled: number;
  infraFailed: number;
  abandonedEnded: number;
  evaluation: number;
  unrewardedAgents: number;
  droppedGroups: number;
  droppedEpisodes: number;
  abandonedByDrain: number;
  /** Groups the scheduler failed for good (`discardGroup`), and their ended episodes that left the pool. */
  failedGroups: number;
  failedGroupEpisodes: number;
  /** Groups dropped from a full pool that could not train again (`#dropStalled`), and their episodes. */
  stalledGroups: number;
  stalledEpisodes: number;
  merge: MergeStats;
}

export type CoordinatorPhase = "rolling" | "draining" | "training";

/** How long a drain waits on open episodes before it says which (`onWarning`). */
const DRAIN_NOTICE_MS = 10_000;

/**
 * Turns ended episodes into training steps. Each ended episode is merged and pooled; when the batching
 * strategy says a policy's batch is ready, claims pause, in-flight episodes finish (or are abandoned after
 * `syncTimeoutS`), the batch is filtered, scored and trained, the engine's version moves on, and claims
 * resume. Episodes leave the pool only after the step that used them has trained.
 */
export class TrainingCoordinator {
  readonly #o: CoordinatorOptions;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #activity: ClientActivity;
  readonly #trainable: ReadonlySet<string>;
  readonly #steps = new Map<string, number>();
  readonly #overCap = new Set<string>();
  readonly #abandoned = new Set<string>();
  readonly #counters: CoordinatorCounters = {
    episodesPooled: 0, infraFailed: 0, abandonedEnded: 0, evaluation: 0, unrewardedAgents: 0,
    droppedGroups: 0, droppedEpisodes: 0, abandonedByDrain: 0, failedGroups: 0, failedGroupEpisodes: 0, stalledGroups: 0, stalledEpisodes: 0, merge: createMergeStats(),
  };
  /** Groups failed for good: their episodes never train, even one that ends late. */
  readonly #failedGroups = new Set<string>();
  #phase: CoordinatorPhase = "rolling";
  #running: Promise<void> | null = null;
  #again = false;
  #retryAt = -Infinity;
  #unsubscribe: (() => void) | null = null;
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;

  constructor(options: CoordinatorOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.#activity = new ClientActivity(options.config.batching.clientIdleS);
    this.#trainable = new Set(Object.keys(options.engines));
  }

  /** Subscribes to the store's episode ends and starts the idle re-check timer. */
  start(): void {
    if (this.#unsubscribe) return;
    this.#stopped = false;
    this.#unsubscribe = this.#o.store.onEnded((e) => this.handleEnded(e));
    const tickMs = this.#o.tickMs ?? 1000;
    if (tickMs > 0) {
      this.#timer = setInterval(() => this.tick(), tickMs);
      this.#timer.unref();
    }
    for (const policy of this.#trainable) this.#checkCap(policy);
    this.tick();
  }

  /** Unsubscribes and waits for a sync in progress; no new sync starts, even one already due. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.whenIdle();
  }

  /** Pools an ended episode (the store's "ended" event) and checks the strategies. */
  handleEnded(episode: EndedEpisode): void {
    const c = this.#counters;
    if (episode.evaluation) {
      c.evaluation++;
      return;
    }
    if (episode.clientId !== null) {
      this.#activity.recordEpisodeEnd(episode.clientId, episode.outcome.kind === "rewarded", this.#now());
    }
    if (this.#abandoned.delete(episode.episodeId) || episode.outcome.kind === "abandoned") {
      c.abandonedEnded++;
      this.#recheckFull();
      return;
    }
    if (episode.outcome.kind === "infra-failed") {
      c.infraFailed++;
      this.#recheckFull();
      return;
    }
    if (this.#failedGroups.has(groupKey(episode))) {
      c.failedGroupEpisodes++;
      return;
    }
    const built = buildEpisodeSamples(episode, this.#o.config.merging, this.#training());
    c.unrewardedAgents += built.unrewardedAgents;
    addMergeStats(c.merge, built.merge);
    this.#o.pool.add(built.units);
    if (built.units.length > 0) c.episodesPooled++;
    for (const u of built.units) this.#checkCap(u.policy);
    this.tick();
  }

  /**
   * A group failed for good (the scheduler gave up on a member): a group trains whole or not at all, so
   * its ended episodes leave the pool, now and if one ends later. Returns how many left.
   */
  discardGroup(env: string, groupId: string): number {
    const key = groupKey({ env, groupId, taskId: "" });
    if (this.#failedGroups.has(key)) return 0;
    this.#failedGroups.add(key);
    this.#counters.failedGroups++;
    const episodes = new Set<string>();
    for (const policy of this.#trainable) {
      const ids = [...new Set(this.#o.pool.entries(policy).filter((e) => e.group === key).map((e) => e.episodeId))];
      this.#o.pool.remove(policy, ids);
      for (const id of ids) episodes.add(id);
      this.#checkCap(policy);
    }
    this.#counters.failedGroupEpisodes += episodes.size;
    return episodes.size;
  }

  /** A client's `agree_sync` (any-client / all-clients). */
  agreeSync(clientId: string): void {
    this.#activity.recordAgreeSync(clientId, this.#now());
    this.tick();
  }

  /** A client's sign of life, so `all-clients` does not drop it as idle. */
  touchClient(clientId: string): void {
    this.#activity.touch(clientId, this.#now());
  }

  /** The client's connection closed: it stops counting for `all-clients` at once (not after `clientIdleS`). */
  forgetClient(clientId: string): void {
    this.#activity.forget(clientId, this.#now());
    this.tick();
  }

  /** Re-checks the strategies; starts a sync when a batch is ready. */
  tick(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    if (this.#now() < this.#retryAt || !this.#readyPolicies().length || this.#o.syncGate?.() === false) return;
    this.#running = this.#syncLoop().finally(() => {
      this.#running = null;
      if (this.#again) this.tick();
    });
  }

  /** False while a sync runs or a policy's pool is at `maxCachedEpisodes`: the scheduler should wait. */
  canSchedule(): boolean {
    return this.#phase === "rolling" && this.#overCap.size === 0;
  }

  /** True when some policy's pool holds a ready batch (a sync is due, or waits for its gate or a backoff). */
  hasReadyBatch(): boolean {
    return this.#readyPolicies().length > 0;
  }

  phase(): CoordinatorPhase {
    return this.#phase;
  }

  counters(): Readonly<CoordinatorCounters> {
    return this.#counters;
  }

  /** The episodes a weight update waits for (its drain), as the store port counts them: claimed ones, scheduled or client-driven. */
  inFlight(): readonly string[] {
    return this.#o.store.inFlight();
  }

  /** Resolves once no sync is running (and none is pending). */
  async whenIdle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /** The trainable policies that still train: those below `maxSteps`. */
  #training(): ReadonlySet<string> {
    const max = this.#o.maxSteps;
    if (max === undefined) return this.#trainable;
    return new Set([...this.#trainable].filter((p) => this.#o.engines[p]!.version() < max));
  }

  #readyPolicies(): string[] {
    const clients = { active: this.#activity.active(this.#now()), agreed: this.#activity.agreed() };
    return [...this.#training()].filter(
      (p) => selectBatch(this.#o.pool.entries(p), this.#o.config.batching, clients).ready,
    );
  }

  async #syncLoop(): Promise<void> {
    do {
      this.#again = false;
      if (this.#stopped || !this.#readyPolicies().length || this.#o.syncGate?.() === false) return;
      this.#phase = "draining";
      this.#o.store.pauseClaims();
      let failed = false;
      try {
        const abandoned = await this.#drain();
        // stopped while draining: no step (the pool stays as the stop's checkpoint keeps it)
        if (abandoned === null) return;
        this.#phase = "training";
        const clients = { active: this.#activity.active(this.#now()), agreed: this.#activity.agreed() };
        const reports: StepReport[] = [];
        for (const policy of this.#training()) {
          const sel = selectBatch(this.#o.pool.entries(policy), this.#o.config.batching, clients);
          if (!sel.ready) continue;
          const report = await this.#trainPolicy(policy, sel.take, abandoned);
          if (report.outcome === "failed") failed = true;
          reports.push(report);
          this.#o.onStep?.(report);
        }
        this.#activity.resetAfterSync();
        await this.#o.onSync?.(reports);
      } catch (err) {
        failed = true;
        this.#o.onError?.(err);
      } finally {
        this.#phase = "rolling";
        this.#o.store.resumeClaims();
      }
      // A failed step keeps its episodes pooled; a later tick retries it once the backoff has passed.
      if (failed) {
        this.#again = false;
        this.#retryAt = this.#now() + (this.#o.failureBackoffMs ?? 30_000);
        return;
      }
    } while (this.#again);
  }

  /**
   * Waits until no episode is in flight, abandoning those still open at `syncTimeoutS`: how many it
   * abandoned, or null once the coordinator is stopped meanwhile. A stop does not wait out the drain: an
   * open client-driven episode held Ctrl-C (and `POST /v1/engine/stop`) for up to `syncTimeoutS`.
   */
  async #drain(): Promise<number | null> {
    const start = this.#now();
    const deadline = start + this.#o.config.syncTimeoutS * 1000;
    let said = false;
    for (;;) {
      if (this.#stopped) return null;
      const left = this.inFlight();
      if (left.length === 0) return 0;
      // Training waits on them, scheduled or client-driven: said once, so a stalled step is never silent.
      if (!said && this.#now() - start >= DRAIN_NOTICE_MS && this.#now() < deadline) {
        said = true;
        const shown = left.slice(0, 5).map((id) => `'${id}'`).join(", ");
        this.#o.onWarning?.(
          `the weight update waits for ${left.length} open episode${left.length === 1 ? "" : "s"} (${shown}${left.length > 5 ? ", ..." : ""}) to end or abort; those still open at server.syncTimeoutS (${this.#o.config.syncTimeoutS} s) are abandoned`,
        );
      }
      if (this.#now() >= deadline) {
        for (const id of left) this.#abandoned.add(id);
        await this.#o.store.abandon(left);
        this.#counters.abandonedByDrain += left.length;
        return left.length;
      }
      await this.#sleep(this.#o.drainPollMs ?? 50);
    }
  }

  async #trainPolicy(policy: string, take: readonly PoolEntry[], abandoned: number): Promise<StepReport> {
    const engine = this.#o.engines[policy]!;
    const cfg = this.#o.config;
    const { kept, dropped } = filterEqualRewardGroups(take, cfg.batching.filterEqualRewards, cfg.batching.order);
    const samples = computeAdvantages(this.#o.pool.loadSamples(kept), cfg.advantage);
    const episodeIds = [...new Set(take.map((e) => e.episodeId))];
    const versionBefore = engine.version();
    const report: StepReport = {
      policy,
      step: this.#steps.get(policy) ?? 0,
      outcome: "no-signal",
      versionBefore,
      versionAfter: versionBefore,
      episodes: 0,
      episodeIds: [...new Set(kept.map((e) => e.episodeId))],
      samples: samples.length,
      groups: new Set(kept.map((e) => e.group)).size,
      groupsPerEnv: groupsPerEnv(kept),
      droppedGroups: dropped,
      abandoned,
      ...summarize(samples),
    };
    report.episodes = report.episodeIds.length;
    if (cfg.merging.prefixTree) report.prefixTree = measurePrefixSavings(samples);
    if (samples.length > 0) {
      try {
        report.metrics = await engine.train(buildTrainBatch(samples, { prefixTree: cfg.merging.prefixTree }));
      } catch (err) {
        report.outcome = "failed";
        report.error = err instanceof Error ? err.message : String(err);
        this.#o.onError?.(err);
        return report;
      }
      report.outcome = "trained";
      report.step += 1;
      this.#steps.set(policy, report.step);
      report.versionAfter = engine.version();
    }
    this.#counters.droppedGroups += dropped.length;
    this.#counters.droppedEpisodes += dropped.reduce((a, g) => a + g.episodes, 0);
    this.#o.pool.remove(policy, episodeIds);
    // a policy done with its steps keeps nothing pooled (nothing of it trains again, and a full pool would stop begins)
    if (this.#o.maxSteps !== undefined && engine.version() >= this.#o.maxSteps) {
      this.#o.pool.clear(policy);
    }
    this.#checkCap(policy);
    return report;
  }

  /** An episode that leaves nothing to pool can still be the last that ran: a full pool is looked at again. */
  #recheckFull(): void {
    for (const p of [...this.#overCap]) this.#checkCap(p);
  }

  #checkCap(policy: string): void {
    const cap = this.#o.config.batching.maxCachedEpisodes;
    let held = this.#o.pool.episodeCount(policy);
    if (held >= cap && !this.#stopped && this.inFlight().length === 0 && !this.#readyPolicies().includes(policy)) held -= this.#dropStalled(policy, held - cap + 1);
    if (held >= cap) {
      if (!this.#overCap.has(policy)) {
        this.#overCap.add(policy);
        this.#o.onWarning?.(
          `sample pool of policy '${policy}' holds ${held} episodes, at batching.maxCachedEpisodes (${cap}); ` +
            `strategy '${this.#o.config.batching.strategy}' has not produced a batch, so scheduling pauses until one trains`,
        );
      }
    } else {
      this.#overCap.delete(policy);
    }
  }

  /**
   * A full pool, nothing running, no batch ready: it would never train again (a long-running service
   * taking client-driven episodes wedged so: begin answered 503 for good). Drops the stalled groups
   * (`stalledGroups`) from every policy's pool, says so, and gives how many of `policy`'s episodes left.
   */
  #dropStalled(policy: string, need: number): number {
    const { strategy, groupSize } = this.#o.config.batching;
    let freed = 0;
    for (const g of stalledGroups(this.#o.pool.entries(policy), { strategy, groupSize }, need)) {
      for (const p of this.#trainable) this.#o.pool.remove(p, g.episodeIds);
      freed += g.episodeIds.length;
      this.#counters.stalledGroups++;
      this.#counters.stalledEpisodes += g.episodeIds.length;
      this.#o.onWarning?.(
        `sample pool of policy '${policy}' is full and nothing runs that could complete a batch: dropped group ${g.env}/${g.taskId} ` +
          `(${g.episodeIds.length} of ${groupSize} episodes; a member aborted, or its group id is used once)`,
      );
    }
    return freed;
  }
}

/** The engine's batch; with `prefixTree` the engine trains on prefix tries (same loss, shared prefixes once). */
export function buildTrainBatch(samples: readonly Sample[], opts: { prefixTree?: boolean } = {}): TrainBatch {
  return {
    ...(opts.prefixTree ? { prefixTree: true } : {}),
    samples: samples.map((s) => ({
      tokenIds: s.tokenIds,
      lossMask: s.lossMask,
      logprobs: s.logprobs,
      advantage: s.advantage,
      weight: s.weight,
    })),
  };
}

function summarize(samples: readonly Sample[]): Pick<StepReport, "tokens" | "lossTokens" | "sampleVersions" | "meanReward"> {
  let tokens = 0;
  let lossTokens = 0;
  let min = Infinity;
  let max = -Infinity;
  let reward = 0;
  for (const s of samples) {
    tokens += s.tokenIds.length;
    reward += s.reward;
    s.lossMask.forEach((m, i) => {
      if (m !== 1) return;
      lossTokens++;
      const v = s.versions[i]!;
      if (v < min) min = v;
      if (v > max) max = v;
    });
  }
  return {
    tokens,
    lossTokens,
    sampleVersions: lossTokens ? { min, max } : { min: -1, max: -1 },
    meanReward: samples.length ? reward / samples.length : 0,
  };
}

/** Distinct groups per environment among pooled entries. */
function groupsPerEnv(entries: readonly PoolEntry[]): Record<string, number> {
  const groups = new Map<string, Set<string>>();
  for (const e of entries) {
    const set = groups.get(e.env) ?? new Set<string>();
    set.add(e.group);
    groups.set(e.env, set);
  }
  return Object.fromEntries([...groups].map(([env, set]) => [env, set.size]));
}
