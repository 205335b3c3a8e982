import { createHash } from "node:crypto";
import { EngineSchema, type EngineConfig } from "../../config/run-config.ts";
import type { Engine, GenerateResult, SamplingParams } from "../engine.ts";
import type { TrainBatch, TrainMetrics } from "../../training/sample.ts";
import { TrainerRequestError, TrainerStateError, TrainerUnavailableError } from "../trainer/errors.ts";
import { createTrainerClient, type TrainerClient } from "../trainer/trainer-client.ts";
import { ContextOverflowError, EngineConfigError, NoReplicaError, PublishFailedError, ReplicaUnavailableError } from "./errors.ts";
import type { InferenceApi } from "./inference-api.ts";
import { createReplicaHttp } from "./replica-http.ts";
import { ReplicaPool, type Replica } from "./replica-pool.ts";
import { ServedLedger } from "./served-ledger.ts";
import { createSglangApi } from "./sglang-api.ts";
import { createVllmApi } from "./vllm-api.ts";

export type OpenAITokensEngineConfig = Extract<EngineConfig, { kind: "openai-tokens" }>;

/** One replica as the engine sees it (for monitoring, and for tests that wait for a weight switch). */
export interface ReplicaStatus {
  url: string;
  /** The weight version it serves (full weights) or the newest adapter it has loaded (LoRA). */
  version: number;
  inFlight: number;
  /** Full weights: taking no new calls until its running ones end and it has reloaded. */
  draining: boolean;
  /** Skipped after a failure until its cooldown ends. */
  down: boolean;
}

/** The `openai-tokens` engine: an Engine that also reports its replicas. */
export interface OpenAITokensEngineHandle extends Engine {
  replicaStatus(): ReplicaStatus[];
  startFresh(): Promise<void>;
}

export interface OpenAITokensEngineDeps {
  fetch?: typeof fetch;
}

/** What the replicas are asked to serve: the model name (base or adapter) of one weight version. */
interface Target {
  version: number;
  model: string;
  adapterPath?: string;
  weightsPath?: string;
}

const COOLDOWN_MS = 5_000;
/** Adapters this many versions behind the served one are unloaded once no call uses them. */
const KEEP_VERSIONS = 2;

function sanitizeName(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[^A-Za-z0-9]+/, "") || "policy";
}

class OpenAITokensEngine implements OpenAITokensEngineHandle {
  readonly kind = "openai-tokens";
  readonly structuredOutput = "guided" as const;
  readonly maxContext: number;
  private readonly pool: ReplicaPool;
  private readonly api: InferenceApi;
  private readonly trainer: TrainerClient;
  private readonly ledger = new ServedLedger();
  private readonly attempts: number;
  private readonly adapterPrefix: string;
  private current: Target;
  /** The trainer's version; ahead of `current` only while a publish has not reached any replica. */
  private trainedVersion = 0;
  private readonly inFlightByVersion = new Map<number, number>();
  private readonly adapters = new Map<string, number>();
  private readonly syncing = new Map<Replica, Promise<void>>();
  /** Draining replicas' wake-ups: called when their last running call ends. */
  private readonly idle = new Map<Replica, () => void>();
  private queue: Promise<unknown> = Promise.resolve();
  /** A step whose `train` failed (its answer lost, or its publish): sent again, the trainer answers it, never applies it twice. */
  private unfinished: { stepId: string; expectedVersion: number } | undefined;

  constructor(private readonly cfg: OpenAITokensEngineConfig, deps: OpenAITokensEngineDeps) {
    const doFetch = deps.fetch ?? fetch;
    const http = createReplicaHttp({ fetch: doFetch, timeoutMs: cfg.requestTimeoutMs, ...(cfg.apiKey ? { apiKey: cfg.apiKey } : {}) });
    this.api = cfg.api === "sglang" ? createSglangApi(http, cfg.model) : createVllmApi(http);
    this.pool = new ReplicaPool(cfg.baseUrls, cfg.replicaWeights, COOLDOWN_MS);
    this.trainer = createTrainerClient({
      url: cfg.trainer.url,
      timeoutMs: cfg.trainer.timeoutMs,
      fetch: doFetch,
      ...(cfg.trainer.apiKey ? { apiKey: cfg.trainer.apiKey } : {}),
    });
    this.maxContext = cfg.maxContext;
    this.attempts = cfg.attempts ?? cfg.baseUrls.length;
    this.adapterPrefix = cfg.adapterPrefix ?? sanitizeName(cfg.model);
    this.current = { version: 0, model: cfg.model };
    // With LoRA, the name a replica reports says which version served; with full weights it cannot.
    if (cfg.weights === "lora") this.adapters.set(cfg.model, 0);
  }

  version(): number {
    return this.current.version;
  }

  replicaStatus(): ReplicaStatus[] {
    const now = Date.now();
    return this.pool.replicas.map((r) => ({ url: r.url, version: r.version, inFlight: r.inFlight, draining: r.draining, down: r.downUntil > now }));
  }

  async generate(promptIds: readonly number[], params: SamplingParams): Promise<GenerateResult> {
    const room = this.maxContext - promptIds.length;
    if (room < 1) throw new ContextOverflowError(promptIds.length, this.maxContext);
    const sampling = { ...params, maxTokens: Math.min(params.maxTokens, room) };
    const { target, value: served, replicaVersion } = await this.onReplica((url, t) => this.api.generate(url, t.model, promptIds, sampling));
    this.ledger.record(served.outputIds, params.stopIds);
    // Full weights: a replica holds one version, the one it had when the call was routed to it (a
    // replica is drained before it reloads). LoRA: the adapter name the replica echoed.
    const version =
      this.cfg.weights === "full"
        ? replicaVersion
        : ((served.servedModel !== undefined ? this.adapters.get(served.servedModel) : undefined) ?? target.version);
    const result: GenerateResult = { outputIds: served.outputIds, logprobs: served.logprobs, finishReason: served.finishReason, version };
    if (served.topLogprobs) result.topLogprobs = served.topLogprobs;
    return result;
  }

  async scoreTokens(ids: readonly number[]): Promise<number[]> {
    if (ids.length >= this.maxContext) throw new ContextOverflowError(ids.length, this.maxContext);
    return (await this.onReplica((url, t) => this.api.score(url, t.model, ids))).value;
  }

  /** Runs `fn` on the least loaded replica serving the current version, moving to another on failure. */
  private async onReplica<T>(fn: (url: string, target: Target) => Promise<T>): Promise<{ target: Target; value: T; replicaVersion: number }> {
    const target = this.current;
    const tried = new Set<Replica>();
    let lastError: unknown;
    this.inFlightByVersion.set(target.version, (this.inFlightByVersion.get(target.version) ?? 0) + 1);
    try {
      for (let attempt = 0; attempt < this.attempts; attempt++) {
        const replica = await this.pickReplica(target, tried);
        if (!replica) break;
        tried.add(replica);
        replica.inFlight++;
        const replicaVersion = replica.version;
        try {
          const value = await fn(replica.url, target);
          this.pool.markUp(replica);
          return { target, value, replicaVersion };
        } catch (e) {
          if (!(e instanceof ReplicaUnavailableError)) throw e;
          this.pool.markDown(replica);
          lastError = e;
        } finally {
          replica.inFlight--;
          if (replica.inFlight === 0) this.idle.get(replica)?.();
        }
      }
    } finally {
      this.inFlightByVersion.set(target.version, (this.inFlightByVersion.get(target.version) ?? 1) - 1);
    }
    // The last failure's words (its replica's URL, the network error) say what to fix: a replica not started, a wrong URL.
    const last = lastError instanceof Error ? `; last: ${lastError.message}` : "";
    throw new NoReplicaError(`no replica served version ${target.version} after ${tried.size} tries${last}`, lastError);
  }

  train(batch: TrainBatch): Promise<TrainMetrics> {
    return this.serialize(async () => {
      if (this.cfg.verifyServedTokens) this.ledger.verify(batch);
      const stepId = batchId(batch);
      // The batch of a step that failed, again (the coordinator retries a failed step with its batch): a
      // step whose answer was lost (a timeout) may be applied, and one whose publish failed is. Sent with
      // its expected version and id, the trainer answers it once more; it was refused 409 for good after a
      // lost answer, and trained twice after a failed publish.
      const again = this.unfinished?.stepId === stepId ? this.unfinished : undefined;
      if (!again && this.trainedVersion > this.current.version) await this.publish(this.trainedVersion);
      const expectedVersion = again?.expectedVersion ?? this.trainedVersion;
      this.unfinished = { stepId, expectedVersion };
      const metrics = await this.trainer.trainStep(expectedVersion, batch, stepId).catch((e: unknown) => {
        throw e instanceof TrainerRequestError && e.trainerCode === "version_conflict" ? versionConflict(e) : e;
      });
      this.trainedVersion = metrics.version;
      await this.publish(metrics.version);
      this.unfinished = undefined;
      return metrics;
    });
  }

  /**
   * A new run: the trainer must answer, train the config's kind of weights and hold version 0 (a trainer
   * left at version N by an earlier run refused every step of this one, after its episodes had run on
   * weights recorded as version 0). With full weights, version 0 is published again and every replica
   * reloads it, so weights left in the publish folder or in a running replica by an earlier run never
   * serve this one (and a replica that cannot reload, one without the dev-mode routes, fails here).
   */
  startFresh(): Promise<void> {
    return this.serialize(async () => {
      const url = this.cfg.trainer.url;
      const status = await this.trainer.status().catch((e: unknown) => {
        if (e instanceof TrainerUnavailableError) {
          throw new TrainerUnavailableError(`the trainer does not answer (${e.message}): start it before the run (python3 -m agentjet_trainer, docs/deploy.md) or correct engine.trainer.url`, e);
        }
        if (e instanceof TrainerRequestError && e.status === 401) {
          throw new TrainerRequestError(e.status, e.trainerCode, `${url} refused the key: engine.trainer.apiKey must be the trainer's --api-key ($AGENTJET_TRAINER_API_KEY)`, { cause: e });
        }
        throw e;
      });
      if (status.mode !== this.cfg.weights) {
        throw new EngineConfigError(
          `the trainer at ${url} trains ${status.mode} weights (--mode ${status.mode}) but the engine config says weights: ${this.cfg.weights} (lora when not set): make them the same`,
        );
      }
      if (status.version !== 0) {
        throw new TrainerStateError(
          `the trainer at ${url} is at version ${status.version} (${status.steps} steps trained), not 0: it trained for another run, or for a start of this run that wrote no checkpoint. A new run starts from the initial weights: restart the trainer, or --resume the run it trained (its checkpoint is loaded into the trainer)`,
        );
      }
      this.trainedVersion = 0;
      if (status.mode !== "full") return;
      // What the replicas hold is unknown until they reload: one that fails now is reloaded before it serves.
      for (const r of this.pool.replicas) r.version = -1;
      await this.publish(0, true);
    });
  }

  save(dir: string): Promise<void> {
    return this.serialize(async () => {
      await this.trainer.save(dir);
    });
  }

  load(dir: string): Promise<void> {
    return this.serialize(async () => {
      const { version } = await this.trainer.load(dir);
      this.trainedVersion = version;
      this.unfinished = undefined;
      // The checkpoint's weights may differ from what the replicas hold under the same version.
      await this.publish(version, true);
    });
  }

  async close(): Promise<void> {
    await this.queue.catch(() => undefined);
  }

  private serialize<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Asks the trainer to publish `version`, loads it into every replica, then routes new calls to it. */
  private async publish(version: number, force = false): Promise<void> {
    const pub = await this.trainer.publish({ version, adapter_name: `${this.adapterPrefix}-v${version}` });
    const target: Target =
      pub.mode === "lora"
        ? { version, model: pub.adapter_name, adapterPath: pub.adapter_path }
        : { version, model: this.cfg.model, ...(pub.path === undefined ? {} : { weightsPath: pub.path }) };
    if (pub.mode === "lora") this.adapters.set(pub.adapter_name, version);
    else this.adapters.clear();
    // Full weights roll through the replicas one at a time, so the others keep serving during each reload.
    const results =
      target.adapterPath === undefined
        ? await this.oneByOne(this.pool.replicas.map((r) => () => this.syncReplica(r, target, force)))
        : await Promise.allSettled(this.pool.replicas.map((r) => this.syncReplica(r, target, force)));
    const failures = results.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
    if (failures.length === results.length) {
      // the replica's words (a missing dev-mode route, an unreachable URL) say what to fix
      const why = failures[0] instanceof Error ? `: ${failures[0].message}` : "";
      const keeps = this.current.version < version ? `; version ${this.current.version} keeps serving` : "";
      throw new PublishFailedError(`no replica loaded version ${version}${keeps}${why}`, failures[0]);
    }
    const previous = this.current;
    this.current = target;
    if (previous.version !== target.version) await this.unloadOldAdapters();
  }

  private async syncReplica(r: Replica, target: Target, force = false): Promise<void> {
    if (!force && r.version >= target.version) return;
    const running = this.syncing.get(r);
    if (running) return running;
    const job = (async () => {
      if (target.adapterPath !== undefined) {
        await this.api.loadAdapter(r.url, target.model, target.adapterPath);
      } else {
        // New weights replace the old ones under running calls: let those finish first.
        r.draining = true;
        try {
          await this.drained(r);
          await this.api.reloadWeights(r.url, target.weightsPath);
        } finally {
          r.draining = false;
        }
      }
      r.version = Math.max(r.version, target.version);
    })();
    this.syncing.set(r, job);
    try {
      await job;
    } catch (e) {
      this.pool.markDown(r);
      throw e;
    } finally {
      this.syncing.delete(r);
    }
  }

  private drained(r: Replica): Promise<void> {
    if (r.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.idle.set(r, () => {
        this.idle.delete(r);
        resolve();
      });
    });
  }

  private async oneByOne(jobs: Array<() => Promise<void>>): Promise<Array<PromiseSettledResult<void>>> {
    const out: Array<PromiseSettledResult<void>> = [];
    for (const job of jobs) out.push(...(await Promise.allSettled([job()])));
    return out;
  }

  /**
   * A replica that has the target loaded; lagging replicas (a failed load) are brought up to date first,
   * and when only draining ones are left the call waits for their reload.
   */
  private async pickReplica(target: Target, tried: ReadonlySet<Replica>): Promise<Replica | undefined> {
    const picked = this.pool.pick(target.version, tried);
    if (picked) return picked;
    const lagging = this.pool.replicas.filter((r) => r.version < target.version && !tried.has(r));
    // Every replica is draining or reloading full weights (one replica, say): the call waits for a reload.
    const reloading = this.pool.replicas.flatMap((r) => (r.draining && !tried.has(r) ? [this.syncing.get(r)] : []));
    await Promise.allSettled([...lagging.map((r) => this.syncReplica(r, target)), ...reloading]);
    return this.pool.pick(target.version, tried);
  }

  /** Best effort: a replica that misses an unload only keeps a stale adapter in its cache. */
  private async unloadOldAdapters(): Promise<void> {
    const jobs: Array<Promise<void>> = [];
    for (const [name, version] of this.adapters) {
      if (version === 0 || version > this.current.version - KEEP_VERSIONS) continue;
      if ((this.inFlightByVersion.get(version) ?? 0) > 0) continue;
      this.adapters.delete(name);
      this.inFlightByVersion.delete(version);
      for (const r of this.pool.replicas) jobs.push(this.api.unloadAdapter(r.url, name).catch(() => undefined));
    }
    await Promise.all(jobs);
  }
}

/** The id a step's batch is sent with: the same samples give the same id. */
function batchId(batch: TrainBatch): string {
  const h = createHash("sha256");
  for (const s of batch.samples) {
    h.update(Float64Array.from([s.tokenIds.length, s.advantage, s.weight]));
    h.update(Int32Array.from(s.tokenIds));
    h.update(Int8Array.from(s.lossMask));
    h.update(Float64Array.from(s.logprobs));
  }
  h.update(batch.prefixTree ? "tree" : "flat");
  return h.digest("hex").slice(0, 32);
}

/** A step refused for its version: the trainer lost this run's weights (restarted) or another run trains on it. */
function versionConflict(e: TrainerRequestError): TrainerRequestError {
  return new TrainerRequestError(
    e.status,
    e.trainerCode,
    `${e.detail}; the trainer restarted (its weights are gone) or another run trains on it: stop this run and --resume it, which loads its last checkpoint into the trainer`,
    { cause: e },
  );
}

/**
 * The `openai-tokens` engine: generation on vLLM (or SGLang) replicas in token-in/token-out form, training
 * on a trainer service (trainer protocol v1). The ids it returns are the ids the replica reported, and a
 * batch can only train spans it served (`verifyServedTokens`).
 */
export function createOpenAITokensEngine(cfg: OpenAITokensEngineConfig, deps: OpenAITokensEngineDeps = {}): OpenAITokensEngineHandle {
  const parsed = EngineSchema.parse(cfg);
  if (parsed.kind !== "openai-tokens") throw new EngineConfigError("not an openai-tokens engine config");
  if (parsed.replicaWeights && parsed.replicaWeights.length !== parsed.baseUrls.length) {
    throw new EngineConfigError(`replicaWeights has ${parsed.replicaWeights.length} entries for ${parsed.baseUrls.length} baseUrls`);
  }
  return new OpenAITokensEngine(parsed, deps);
}
