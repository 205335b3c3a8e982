import type { SamplingParams } from "../engine.ts";

/** One generation as a replica returned it: the ids exactly as served, never re-derived from text. */
export interface ServedGeneration {
  outputIds: number[];
  logprobs: number[];
  topLogprobs?: Array<Array<{ id: number; logprob: number }>>;
  finishReason: "stop" | "length";
  /** The model (base name or adapter name) that served, as the replica reports it when it does. */
  servedModel?: string;
}

/** What the engine needs from a replica's API: token-in/token-out generation and weight updates. */
export interface InferenceApi {
  generate(baseUrl: string, model: string, promptIds: readonly number[], params: SamplingParams): Promise<ServedGeneration>;
  /** Log-prob of ids[i] given ids[0..i) for i >= 1 (index 0 is 0), from the replica's prompt log-probs. */
  score(baseUrl: string, model: string, ids: readonly number[]): Promise<number[]>;
  loadAdapter(baseUrl: string, name: string, path: string): Promise<void>;
  unloadAdapter(baseUrl: string, name: string): Promise<void>;
  /** Full weights written to `path` by the trainer; a no-op where the trainer pushes weights itself. */
  reloadWeights(baseUrl: string, path: string | undefined): Promise<void>;
}
