export { createOpenAITokensEngine } from "./openai-tokens-engine.ts";
export type { OpenAITokensEngineConfig, OpenAITokensEngineDeps } from "./openai-tokens-engine.ts";
export {
  ContextOverflowError,
  EngineConfigError,
  NoReplicaError,
  PublishFailedError,
  ReplicaProtocolError,
  ReplicaRequestError,
  ReplicaUnavailableError,
  UnservedTokensError,
} from "./errors.ts";
