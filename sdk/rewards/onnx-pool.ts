import { availableParallelism } from "node:os";
import { createRequire } from "node:module";
import { RewardModelError } from "./errors.ts";
import { OnnxProcesses } from "./onnx-processes.ts";

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
  /** Scoring processes (default min(2, cores)). */
  processes?: number;
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
 * ONNX reward-model inference in a pool of scoring processes (`onnx-processes.ts`), batched across
 * episodes: texts that arrive in the same event-loop turn (the episodes a client ends together) go to the
 * model in one run, per model. Never on the caller's event loop, never inside an isolate, and never in
 * the caller's process: a native crash in onnxruntime fails the batches it held, not the client.
 */
export class OnnxScorer {
  readonly #o: Required<OnnxScorerOptions>;
  #pool: OnnxProcesses | null = null;
  #queue: Pending[] = [];
  #scheduled = false;
  batches = 0;

  constructor(options: OnnxScorerOptions = {}) {
    this.#o = { maxBatch: options.maxBatch ?? 64, processes: options.processes ?? Math.min(2, availableParallelism()), unbatched: options.unbatched ?? false };
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
    if (pool) await pool.close();
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
      const pool = this.#acquire();
      this.batches += 1;
      const scores = await pool.run({ modelPath, vocabPath, kind, texts: batch.map((p) => p.text) });
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

  #acquire(): OnnxProcesses {
    if (!this.#pool) {
      if (!onnxAvailable()) {
        throw new RewardModelError(
          "AJ_ERR_REWARD_MODEL_UNAVAILABLE",
          "this environment scores with an ONNX reward model, but onnxruntime-node (an optional dependency) is not installed: run `ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node`",
        );
      }
      // Every process stays up once started: each new one loads onnxruntime and every model session again.
      this.#pool = new OnnxProcesses(this.#o.processes);
    }
    return this.#pool;
  }
}
