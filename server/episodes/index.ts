/**
 * Episodes for other folders: the store's types, outcomes and errors, an `episodes` row read back
 * (`episodeFromRow`), keys, the begin route, the caller's identity, transcripts and the coordinator's port.
 * `createEpisodeStore` is server/index.ts's (the store records calls through the tracker's writer thread),
 * so a part that only speaks of episodes does not load it.
 */
export { beginEpisodeRoute, type BeginRouteOptions } from "./begin-route.ts";
export type { AbortReason, AgentBinding, EndEpisodeInput, Episode, EpisodeState, RegisterEpisodeInput } from "./episode.ts";
export { episodeFromRow, type EpisodeRow } from "./episode-rows.ts";
export { createEpisodeStorePort } from "./episode-store-port.ts";
export type { EpisodeStore, EpisodeStoreOptions } from "./episode-store.ts";
export {
  EpisodeExistsError,
  EpisodeNotFoundError,
  EpisodeStateError,
  EpisodeStorageError,
  InvalidRewardsError,
  refusalError,
  UnknownBindingError,
} from "./errors.ts";
export { createKeySigner, generateKeySecret, type KeyPayload, type KeySigner, type VerifyResult } from "./keys.ts";
export type {
  AlreadyRegistered,
  Authorization,
  ChangeResult,
  ClaimResult,
  Done,
  EndResult,
  EpisodeAction,
  EpisodeRefusal,
  NotFound,
  RegisterResult,
  RewardsRefused,
  UnknownBinding,
  WrongState,
} from "./outcomes.ts";
export { callerIdentity } from "./ownership.ts";
export type { EpisodeStoreEvents } from "./store-events.ts";
export { agentTranscript } from "./transcript.ts";
