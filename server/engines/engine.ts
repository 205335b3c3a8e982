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
  /**
   * Called with each token as it is made (streaming). Engines that stream let the event loop run between
   * calls; the ids and log-probs are the same ones the result carries. Returning true ends the generation
   * after this token with finish reason `stop` (a stop string appeared).
   */
  onToken?: (id: number, logprob: number) => boolean | void;
  /** Restricts which ids may come next (structured output). In-process engines apply it; see `TokenMask`. */
  mask?: TokenMask;
  /** The same constraint as external engines' guided decoding takes it (vLLM / SGLang). */
  guided?: GuidedDecoding;
}

/**
 * A per-call, stateful constraint on generation: before each step the engine asks which ids are allowed
 * (`allowed` sets 1 at allowed ids of a vocabulary-sized array, cleared to 0 by the caller), and tells it
 * which id was chosen. Log-probs stay those of the unconstrained model (what training recomputes).
 */
export interface TokenMask {
  allowed(out: Uint8Array, remaining: number): void;
  accept(id: number): void;
}

/** A constraint in wire form: a JSON schema (`{}` is any JSON object's schema with `jsonObject`). */
export type GuidedDecoding = { kind: "json_schema"; schema: unknown } | { kind: "json_object" };


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
  /**
   * How the engine honours structured output: `mask` applies `SamplingParams.mask` per token (in-process),
   * `guided` passes `SamplingParams.guided` to the inference server. Absent: neither (a constrained request is a 400).
   */
  readonly structuredOutput?: "mask" | "guided";
  version(): number;
  generate(promptIds: readonly number[], params: SamplingParams): Promise<GenerateResult>;
  /** Trains one step on a batch and moves the version on by one. Frozen engines throw. */
  train(batch: TrainBatch): Promise<TrainMetrics>;
  /** Log-probs of `ids[i]` given `ids[0..i)` for every i >= 1 (index 0 is 0). For checks and merging tests. */
  scoreTokens?(ids: readonly number[]): Promise<number[]>;
  /**
   * Called once before a run that starts from step 0 uses the engine (a resumed run calls `load` instead).
   * An engine whose weights live outside this process checks that they are a new run's initial weights,
   * where every sampler serves them, and throws what to fix otherwise (a trainer down or already trained).
   */
  startFresh?(): Promise<void>;
  save(dir: string): Promise<void>;
  load(dir: string): Promise<void>;
  close(): Promise<void>;
}
