import type { Engine } from "../engines/engine.ts";
import type { FrozenModel } from "../engines/frozen.ts";
import type { EpisodeStore } from "../episodes/episode-store.ts";
import type { Tokenizer } from "../tokenizers/tokenizer.ts";

/** A trainable policy as the routes see it: its engine and its tokenizer (chat template). */
export interface PolicyRuntime {
  name: string;
  engine: Engine;
  tokenizer: Tokenizer;
}

/** Defaults for requests that leave a sampling field out (the run config's `sampling`). */
export interface SamplingDefaults {
  maxTokens: number;
  temperature: number;
  topP: number;
  /** A prompt that does not fit: `length` answers finish_reason length, `error` a 400 `context_length_exceeded`. Default `length`. */
  overflow?: "length" | "error";
}

/** What the route plugins share. */
export interface ServerContext {
  store: EpisodeStore;
  policies: ReadonlyMap<string, PolicyRuntime>;
  frozen: ReadonlyMap<string, FrozenModel>;
  sampling: SamplingDefaults;
}
