/** Episodes: the episode store (state machine, claims, keys, events), its outcomes and errors, the routes the run adds, transcripts. */
export { beginEpisodeRoute, CLIENT_ENV, type BeginRouteOptions } from "./begin-route.ts";
export type { AbortReason, AgentBinding, EndEpisodeInput, Episode, EpisodeState, RegisterEpisodeInput } from "./episode.ts";
export { createEpisodeStorePort } from "./episode-store-port.ts";
export { createEpisodeStore, type EpisodeStore, type EpisodeStoreOptions } from "./episode-store.ts";
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
export { callerIdentity, episodeOwners, type EpisodeOwners } from "./ownership.ts";
export type { EpisodeStoreEvents } from "./store-events.ts";
export { agentTranscript } from "./transcript.ts";
