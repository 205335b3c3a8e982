/** The swarm server's public entry. */
export { buildServer, type AgentJetHandle, type BuildServerOptions } from "./app/build-server.ts";
export type { PolicyRuntime, SamplingDefaults, ServerContext } from "./app/server-context.ts";
export { formatConfigIssues, loadRunConfig, parseRunConfig, type ConfigIssue, type LoadRunConfigResult } from "./config/load-run-config.ts";
export { RunConfigSchema, type RunConfig } from "./config/run-config.ts";
export { openRunDb, type RunDb } from "./db/run-db.ts";
export { createEngine, type CreateEngineDeps } from "./engines/create-engine.ts";
export type { Engine, GenerateResult, SamplingParams } from "./engines/engine.ts";
export { createFrozenModel, FrozenUpstreamError, type FrozenModel, type FrozenModelDeps } from "./engines/frozen.ts";
export type { AbortReason, AgentBinding, EndEpisodeInput, Episode, EpisodeState, RegisterEpisodeInput } from "./episodes/episode.ts";
export type {
  Authorization,
  ChangeResult,
  ClaimResult,
  EndResult,
  EpisodeRefusal,
  RegisterResult,
} from "./episodes/outcomes.ts";
export { createEpisodeStorePort } from "./episodes/episode-store-port.ts";
export { agentTranscript } from "./episodes/transcript.ts";
export { createEpisodeStore, type EpisodeStore, type EpisodeStoreOptions } from "./episodes/episode-store.ts";
export type { EpisodeStoreEvents } from "./episodes/store-events.ts";
export {
  EpisodeExistsError,
  EpisodeNotFoundError,
  EpisodeStateError,
  EpisodeStorageError,
  InvalidRewardsError,
  refusalError,
  UnknownBindingError,
} from "./episodes/errors.ts";
export { createKeySigner, generateKeySecret, type KeyPayload, type KeySigner } from "./episodes/keys.ts";
export { AgentJetServerError } from "./errors.ts";
export { HttpError } from "./openai/errors.ts";
export { canonicalText } from "./tokenizers/canonical-text.ts";
export { createTokenizer, type TokenizerKind } from "./tokenizers/create-tokenizer.ts";
export { createEmbeddedTokenizer, EMBEDDED_IDS } from "./tokenizers/embedded.ts";
export { createQwen3Tokenizer } from "./tokenizers/qwen3.ts";
export type { ChatTurnMessage, PromptSegment, RenderedPrompt, Tokenizer, ToolDefinition } from "./tokenizers/tokenizer.ts";
export type { CallRecord } from "./tracker/call-record.ts";
export { createTracker, type TrackedCall, type Tracker } from "./tracker/tracker.ts";
