import type { TrainBatch, TrainMetrics } from "../training/sample.ts";

export interface SamplingParams {
  maxTokens: number;
  /** 0 means greedy. */
  temperature: number;
  topP: number;
  seed?: number;
  /** Generation stops after any of these ids (they are kept in the output). */
  stopIds: readonly number[];
  /** How many alternatives per position to return (OpenAI `top_logprobs`), 0 for none. */
  topLogprobs?: number;
}

export interface GenerateResult {
  outputIds: number[];
  /** Behaviour log-prob of each output id under the sampling distribution's model (temperature 1). */
  logprobs: number[];
  topLogprobs?: Array<Array<{ id: number; logprob: number }>>;
  finishReason: "stop" | "length";
  /** The weight version that produced this output. */
  version: number;
}

/** An engine serves one policy: generation with token ids and log-probs, and training. */
export interface Engine {
  readonly kind: string;
  /** Largest prompt + output length the engine accepts. */
  readonly maxContext: number;
  version(): number;
  generate(promptIds: readonly number[], params: SamplingParams): Promise<GenerateResult>;
  /** Trains one step on a batch and moves the version on by one. Frozen engines throw. */
  train(batch: TrainBatch): Promise<TrainMetrics>;
  /** Log-probs of `ids[i]` given `ids[0..i)` for every i >= 1 (index 0 is 0). For checks and merging tests. */
  scoreTokens?(ids: readonly number[]): Promise<number[]>;
  save(dir: string): Promise<void>;
  load(dir: string): Promise<void>;
  close(): Promise<void>;
}
