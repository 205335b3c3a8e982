import type { z } from "zod";
import type { EmbeddedModelSchema, OptimizerSchema } from "../../config/run-config.ts";
import type { TrainBatch, TrainMetrics, TrainSample } from "../../training/sample.ts";
import type { Engine, GenerateResult, SamplingParams, TokenMask } from "../engine.ts";
import { flatAccumulator, treeAccumulator } from "./accumulators.ts";
import { applyAdam, clipGradNorm, createAdamState, type AdamState } from "./adam.ts";
import { readCheckpoint, writeCheckpoint, type CheckpointHeader } from "./checkpoint.ts";
import { DecodeScratch, decodeTokens } from "./decode.ts";
import {
  EmbeddedCheckpointMismatchError,
  EmbeddedClosedError,
  EmbeddedContextOverflowError,
  EmbeddedInputError,
} from "./errors.ts";
import {
  createLayout,
  initWeights,
  viewWeights,
  type ModelShape,
  type ModelWeights,
  type ParamLayout,
} from "./layout.ts";
import { forwardSequence, scoreSequence, transposeWeights } from "./model.ts";
import { PrefixCachePool } from "./prefix-cache.ts";
import { Rng } from "./rng.ts";
import { logSumExp } from "./kernels.ts";
import { TokenSampler, topLogprobs } from "./sampling.ts";
import { countLossTokens, createLossTotals } from "./train-step.ts";

export type EmbeddedModelOptions = z.infer<typeof EmbeddedModelSchema>;
export type OptimizerOptions = z.infer<typeof OptimizerSchema>;

export interface EmbeddedEngineOptions {
  vocabSize: number;
  model: EmbeddedModelOptions;
  optimizer: OptimizerOptions;
  /** KV caches kept for prompt-prefix reuse across calls (default 16). */
  prefixCaches?: number;
}

export interface EmbeddedEngine extends Engine {
  readonly kind: "embedded";
  readonly shape: ModelShape;
  readonly parameterCount: number;
  scoreTokens(ids: readonly number[]): Promise<number[]>;
  /**
   * Makes a checkpoint's weights this engine's starting point (a warm-start or another run's result):
   * version 0, a fresh optimizer, and the KL reference set to these weights. Refuses another shape.
   */
  initFrom(dir: string): Promise<void>;
}

export function toModelShape(vocabSize: number, model: EmbeddedModelOptions): ModelShape {
  return {
    vocabSize,
    layers: model.layers,
    dim: model.dim,
    heads: model.heads,
    context: model.context,
    mlpDim: model.dim * (model.mlpRatio ?? 4),
    tiedOutput: model.tiedOutput ?? true,
  };
}

const SHAPE_FIELDS = ["vocabSize", "layers", "dim", "heads", "context", "mlpDim", "tiedOutput"] as const;

/** The in-process CPU policy: a small transformer that generates with a KV cache and trains with PPO. */
export function createEmbeddedEngine(opts: EmbeddedEngineOptions): EmbeddedEngine {
  return new EmbeddedEngineImpl(opts);
}

class EmbeddedEngineImpl implements EmbeddedEngine {
  readonly kind = "embedded" as const;
  readonly structuredOutput = "mask" as const;
  readonly shape: ModelShape;
  readonly maxContext: number;
  readonly parameterCount: number;
  private readonly layout: ParamLayout;
  private readonly params: Float32Array;
  private readonly weights: ModelWeights;
  private readonly grads: ModelWeights;
  private adam: AdamState;
  private reference: ModelWeights | null = null;
  private currentVersion = 0;
  private readonly rng: Rng;
  private readonly scratch: DecodeScratch;
  private readonly pool: PrefixCachePool;
  private readonly sampler: TokenSampler;
  private readonly masked: Float32Array;
  private readonly allowed: Uint8Array;
  /** Generations run one at a time, in call order. */
  private generating: Promise<unknown> = Promise.resolve();
  /** Train, save and load run one at a time, in call order. */
  private queue: Promise<unknown> = Promise.resolve();
  /** The latest call that changes the weights (train, load, initFrom); a generation issued after it waits for it. */
  private lastWrite: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(private readonly opts: EmbeddedEngineOptions) {
    this.shape = toModelShape(opts.vocabSize, opts.model);
    this.layout = createLayout(this.shape);
    this.maxContext = this.shape.context;
    this.parameterCount = this.layout.size;
    this.params = new Float32Array(this.layout.size);
    initWeights(this.layout, this.params, opts.model.seed);
    this.weights = viewWeights(this.layout, this.params);
    this.grads = viewWeights(this.layout, new Float32Array(this.layout.size));
    this.adam = createAdamState(this.layout.size);
    if (opts.optimizer.klCoef > 0) this.reference = viewWeights(this.layout, this.params.slice());
    this.rng = new Rng(opts.model.seed ^ 0x5eed);
    this.scratch = new DecodeScratch(this.shape);
    this.pool = new PrefixCachePool(this.shape, opts.prefixCaches ?? 16);
    this.sampler = new TokenSampler(this.shape.vocabSize);
    this.masked = new Float32Array(this.shape.vocabSize);
    this.allowed = new Uint8Array(this.shape.vocabSize);
  }

  version(): number {
    return this.currentVersion;
  }

  /**
   * Log-probs are the sampled tokens' under the model at temperature 1, whatever sampled them (and
   * whatever a mask allowed); temperature 0 is greedy. With `onToken`, the event loop runs after every
   * token; without, once a generation has held it `YIELD_AFTER_MS` (a whole reply in one go held the
   * server: 300-900 ms for a 20-token JSON answer on Qwen3's vocabulary). Generations run one at a time
   * (they share the decode scratch).
   */
  generate(promptIds: readonly number[], params: SamplingParams): Promise<GenerateResult> {
    // Calls keep their order: a generation waits for the weight changes (train, load) called before it, a
    // weight change for the generations called before it, so no reply mixes two weight versions or
    // decodes into a KV cache a train step cleared (a streamed reply yields to the event loop per token).
    const writtenBefore = this.lastWrite;
    const run = this.generating.then(() => writtenBefore).then(() => this.runGenerate(promptIds, params));
    this.generating = run.catch(() => undefined);
    return run;
  }

  private async runGenerate(promptIds: readonly number[], params: SamplingParams): Promise<GenerateResult> {
    const L = promptIds.length;
    if (L === 0) throw new EmbeddedInputError("the prompt is empty");
    this.checkIds(promptIds, "prompt");
    if (L >= this.maxContext) throw new EmbeddedContextOverflowError(L, this.maxContext, "the prompt");
    const V = this.shape.vocabSize;
    const rng = params.seed !== undefined ? new Rng(params.seed) : new Rng(this.rng.nextUint32());
    const stops = new Set(params.stopIds);
    const topK = params.topLogprobs ?? 0;
    const outputIds: number[] = [];
    const logprobs: number[] = [];
    const tops: Array<Array<{ id: number; logprob: number }>> = [];
    const version = this.currentVersion;
    if (params.maxTokens < 1) return { outputIds, logprobs, finishReason: "length", version };
    const { cache, reuse } = this.pool.acquire(promptIds);
    decodeTokens(this.weights, this.shape, cache, this.scratch, promptIds.slice(reuse), true);
    let finishReason: GenerateResult["finishReason"] = "length";
    const limit = Math.min(params.maxTokens, this.maxContext - L);
    let since = performance.now();
    for (;;) {
      const logits = this.scratch.logits;
      let sampleFrom: Float32Array = logits;
      if (params.mask) {
        if (!applyMask(params.mask, logits, this.masked, this.allowed, limit - outputIds.length)) break;
        sampleFrom = this.masked;
      }
      const id = this.sampler.pick(sampleFrom, params.temperature, params.topP, rng);
      const logprob = logits[id]! - logSumExp(logits, 0, V);
      params.mask?.accept(id);
      outputIds.push(id);
      logprobs.push(logprob);
      if (topK > 0) tops.push(topLogprobs(logits, V, topK));
      const stopNow = params.onToken?.(id, logprob) === true;
      if (params.onToken !== undefined || performance.now() - since >= YIELD_AFTER_MS) {
        await yieldToEventLoop();
        since = performance.now();
      }
      if (stops.has(id) || stopNow) {
        finishReason = "stop";
        break;
      }
      if (outputIds.length >= limit) break;
      decodeTokens(this.weights, this.shape, cache, this.scratch, [id], true);
    }
    const result: GenerateResult = { outputIds, logprobs, finishReason, version };
    if (topK > 0) result.topLogprobs = tops;
    return result;
  }

  async scoreTokens(ids: readonly number[]): Promise<number[]> {
    await this.lastWrite;
    if (ids.length === 0) return [];
    this.checkIds(ids, "sequence");
    if (ids.length > this.maxContext) throw new EmbeddedContextOverflowError(ids.length, this.maxContext, "the sequence");
    return scoreSequence(forwardSequence(this.weights, this.shape, ids), this.shape.vocabSize);
  }

  train(batch: TrainBatch): Promise<TrainMetrics> {
    return this.changeWeights(() => this.runTrain(batch));
  }

  save(dir: string): Promise<void> {
    return this.exclusive(async () => {
      const files: Record<string, string> = { weights: "weights.f32", adamM: "adam-m.f32", adamV: "adam-v.f32" };
      const arrays: Record<string, Float32Array> = { weights: this.params, adamM: this.adam.m, adamV: this.adam.v };
      if (this.reference) {
        files.reference = "reference.f32";
        arrays.reference = this.reference.buffer as Float32Array;
      }
      const header: CheckpointHeader = {
        format: "agentjet-embedded",
        formatVersion: 1,
        shape: { ...this.shape },
        model: { ...this.opts.model },
        paramCount: this.layout.size,
        tensors: this.layout.tensors.map((t) => ({ name: t.name, shape: t.shape, offset: t.offset })),
        version: this.currentVersion,
        adamStep: this.adam.step,
        files,
        savedAt: new Date().toISOString(),
      };
      await writeCheckpoint(dir, { header, arrays });
    });
  }

  load(dir: string): Promise<void> {
    return this.changeWeights(async () => {
      const { header, arrays } = await this.readMatching(dir);
      this.params.set(arrays.weights!);
      this.adam = { m: arrays.adamM!, v: arrays.adamV!, step: header.adamStep };
      if (arrays.reference) this.reference = viewWeights(this.layout, arrays.reference);
      else if (this.opts.optimizer.klCoef > 0) this.reference = viewWeights(this.layout, this.params.slice());
      else this.reference = null;
      this.currentVersion = header.version;
      this.pool.clear();
    });
  }

  initFrom(dir: string): Promise<void> {
    return this.changeWeights(async () => {
      const { arrays } = await this.readMatching(dir);
      this.params.set(arrays.weights!);
      this.adam = createAdamState(this.layout.size);
      this.reference = this.opts.optimizer.klCoef > 0 ? viewWeights(this.layout, this.params.slice()) : null;
      this.currentVersion = 0;
      this.pool.clear();
    });
  }

  private async readMatching(dir: string): ReturnType<typeof readCheckpoint> {
    const data = await readCheckpoint(dir);
    const { header } = data;
    for (const field of SHAPE_FIELDS) {
      if (header.shape[field] !== this.shape[field]) {
        throw new EmbeddedCheckpointMismatchError(`shape.${field}`, this.shape[field], header.shape[field]);
      }
    }
    if (header.paramCount !== this.layout.size) {
      throw new EmbeddedCheckpointMismatchError("paramCount", this.layout.size, header.paramCount);
    }
    return data;
  }

  async close(): Promise<void> {
    await this.queue;
    this.closed = true;
    this.pool.clear();
  }

  private async runTrain(batch: TrainBatch): Promise<TrainMetrics> {
    const started = performance.now();
    const o = this.opts.optimizer;
    for (const s of batch.samples) this.checkSample(s);
    const batchTokens = batch.samples.reduce((n, s) => n + countLossTokens(s), 0);
    const lossParams = { clipEps: o.clipEps, klCoef: o.klCoef, supervised: batch.supervised === true };
    const ref = o.klCoef > 0 ? this.reference : null;
    const model = { weights: this.weights, grads: this.grads, shape: this.shape };
    const step = { batch, ref, batchTokens, params: lossParams };
    const accumulate = batch.prefixTree === true ? treeAccumulator(model, step) : flatAccumulator(model, step, o.microBatch);
    let loss = 0;
    let gradNorm = 0;
    let clipped = 0;
    let kl = 0;
    const epochs = batchTokens > 0 ? o.epochs : 0;
    for (let e = 0; e < epochs; e++) {
      this.grads.buffer.fill(0);
      const totals = createLossTotals();
      const wT = transposeWeights(this.weights, this.shape);
      // Gradients accumulate over micro-batches into one step; the event loop runs between them.
      for (let unit = 0; unit < accumulate.units; unit++) {
        accumulate.run(unit, wT, totals);
        await yieldToEventLoop();
      }
      gradNorm += clipGradNorm(this.grads.buffer, o.gradClip);
      applyAdam(this.params, this.grads.buffer, this.adam, {
        lr: o.lr,
        beta1: o.beta1,
        beta2: o.beta2,
        weightDecay: o.weightDecay,
      });
      loss += totals.loss;
      clipped += totals.clipped / totals.tokens;
      kl += totals.kl / totals.tokens;
    }
    this.currentVersion++;
    this.pool.clear();
    const n = Math.max(epochs, 1);
    const metrics: TrainMetrics = {
      loss: loss / n,
      tokens: batchTokens,
      gradNorm: gradNorm / n,
      clipFraction: clipped / n,
      version: this.currentVersion,
      durationMs: performance.now() - started,
    };
    if (o.klCoef > 0) metrics.kl = kl / n;
    if (accumulate.treeTokens !== undefined) metrics.treeTokens = accumulate.treeTokens;
    return metrics;
  }

  private checkSample(s: TrainSample): void {
    const T = s.tokenIds.length;
    if (s.lossMask.length !== T || s.logprobs.length !== T) {
      throw new EmbeddedInputError(`a sample has ${T} tokens but ${s.lossMask.length} mask and ${s.logprobs.length} log-prob entries`);
    }
    if (T > this.maxContext) throw new EmbeddedContextOverflowError(T, this.maxContext, "a training sample");
    this.checkIds(s.tokenIds, "training sample");
  }

  private checkIds(ids: readonly number[], what: string): void {
    if (this.closed) throw new EmbeddedClosedError();
    for (const id of ids) {
      if (!Number.isInteger(id) || id < 0 || id >= this.shape.vocabSize) {
        throw new EmbeddedInputError(`${what} holds token id ${id}, outside the vocabulary of ${this.shape.vocabSize}`);
      }
    }
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(() => {
      if (this.closed) throw new EmbeddedClosedError();
      return fn();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** An exclusive call that changes the weights: it waits for the generations issued before it. */
  private changeWeights<T>(fn: () => Promise<T>): Promise<T> {
    const generatedBefore = this.generating;
    const run = this.exclusive(async () => {
      await generatedBefore;
      return fn();
    });
    this.lastWrite = run.catch(() => undefined);
    return run;
  }
}

/** Copies `logits` into `masked` with disallowed ids at -Infinity; false when the mask allows nothing. */
function applyMask(mask: TokenMask, logits: Float32Array, masked: Float32Array, allowed: Uint8Array, remaining: number): boolean {
  allowed.fill(0);
  mask.allowed(allowed, remaining);
  let any = false;
  for (let i = 0; i < logits.length; i++) {
    if (allowed[i] === 1) {
      masked[i] = logits[i]!;
      any = true;
    } else masked[i] = -Infinity;
  }
  return any;
}

/** A generation lets the event loop run once it has held it this long (ms), streamed or not. */
const YIELD_AFTER_MS = 2;

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
