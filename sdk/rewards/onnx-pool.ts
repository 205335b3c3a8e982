import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import type { Piscina } from "piscina";
import { RewardModelError } from "./errors.ts";

/** Whether `onnxruntime-node` (an optional dependency) is installed. */
export function onnxAvailable(): boolean {
  try {
    createRequire(import.meta.url).resolve("onnxruntime-node");
    return true;
  } catch {
    return false;
  }
}

export interface OnnxScorerOptions {
  /** Texts per `session.run` at most (default 64). */
  maxBatch?: number;
  /** Worker threads (default min(2, cores)). */
  threads?: number;
  /** Score each text alone instead of batching across episodes (the bench's baseline). */
  unbatched?: boolean;
}

export type FeatureKind = "bag-of-words" | "characters";

interface Pending {
  modelPath: string;
  vocabPath: string;
  kind: FeatureKind;
  text: string;
  resolve: (score: number) => void;
  reject: (err: unknown) => void;
}

/**
 * ONNX reward-model inference in a piscina worker pool, batched across episodes: texts that arrive in
 * the same event-loop turn (the episodes a client ends together) go to the model in one run, per model.
 * Never on the caller's event loop, never inside an isolate.
 */
export class OnnxScorer {
  readonly #o: Required<OnnxScorerOptions>;
  #pool: Promise<Piscina> | null = null;
  #queue: Pending[] = [];
  #scheduled = false;
  batches = 0;

  constructor(options: OnnxScorerOptions = {}) {
    this.#o = { maxBatch: options.maxBatch ?? 64, threads: options.threads ?? Math.min(2, availableParallelism()), unbatched: options.unbatched ?? false };
  }

  /** The model's raw score for one text. */
  score(modelPath: string, vocab: { path: string; kind: FeatureKind }, text: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ modelPath, vocabPath: vocab.path, kind: vocab.kind, text, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  async close(): Promise<void> {
    const pool = this.#pool;
    this.#pool = null;
    if (pool) await (await pool).destroy();
  }

  #flush(): void {
    this.#scheduled = false;
    const queue = this.#queue;
    this.#queue = [];
    const byModel = new Map<string, Pending[]>();
    for (const p of queue) {
      const key = `${p.modelPath}\0${p.vocabPath}\0${p.kind}`;
      const list = byModel.get(key) ?? [];
      list.push(p);
      byModel.set(key, list);
    }
    const size = this.#o.unbatched ? 1 : this.#o.maxBatch;
    for (const list of byModel.values()) for (let i = 0; i < list.length; i += size) void this.#run(list.slice(i, i + size));
  }

  async #run(batch: Pending[]): Promise<void> {
    const { modelPath, vocabPath, kind } = batch[0]!;
    try {
      const pool = await this.#acquire();
      this.batches += 1;
      const scores = (await pool.run({ modelPath, vocabPath, kind, texts: batch.map((p) => p.text) })) as number[];
      batch.forEach((p, i) => {
        const s = scores[i]!;
        if (Number.isFinite(s)) p.resolve(s);
        else p.reject(new RewardModelError("AJ_ERR_REWARD_MODEL_FAILED", `${modelPath} returned a non-finite score (${s})`));
      });
    } catch (err) {
      const e = err instanceof RewardModelError ? err : new RewardModelError("AJ_ERR_REWARD_MODEL_FAILED", `${modelPath}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      for (const p of batch) p.reject(e);
    }
  }

  #acquire(): Promise<Piscina> {
    if (!this.#pool) {
      if (!onnxAvailable()) {
        throw new RewardModelError(
          "AJ_ERR_REWARD_MODEL_UNAVAILABLE",
          "this environment scores with an ONNX reward model, but onnxruntime-node (an optional dependency) is not installed: run `ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node`",
        );
      }
      const filename = fileURLToPath(new URL("./onnx-worker.mjs", import.meta.url));
      // Every thread stays up: piscina ends threads above minThreads as soon as they idle, and each new one
      // loads onnxruntime and every model session again (that cost more than the batches it scored).
      this.#pool = import("piscina").then(({ Piscina }) => new Piscina({ filename, minThreads: this.#o.threads, maxThreads: this.#o.threads }));
    }
    return this.#pool;
  }
}
