export { SwarmClient, type ClientEnvironment, type ClientEvent, type SwarmClientOptions } from "./client.ts";
export { runEpisode, type EpisodeResultMessage } from "./run-episode.ts";
export { createDefaultAgentLoop } from "./default-agent-loop.ts";
export { createChatCompletion, type ChatMessage } from "./chat.ts";
export { defineWorkflow, type EnvHandle, type EpisodeHandle, type Workflow } from "./workflow.ts";
export { backoffDelay, DEFAULT_BACKOFF, type BackoffOptions } from "../backoff.ts";
export { ChatCompletionError, SWARM_CLIENT_ERRORS, SwarmClientError } from "./errors.ts";
export {
  AbortKindSchema,
  AbortReasonSchema,
  AgentAccessSchema,
  AssignmentSchema,
  ClientMessageSchema,
  CodeVersionSchema,
  ENV_MISMATCH_CODE,
  EnvAnnouncementSchema,
  parseFrame,
  ServerMessageSchema,
  SWARM_PATH,
  SWARM_FATAL_ERRORS,
  SWARM_PROTOCOL_VERSION,
  type AgentAccess,
  type Assignment,
  type ClientMessage,
  type CodeVersion,
  type EnvAnnouncement,
  type ParsedClientMessage,
  type ServerMessage,
  type SwarmAbortReason,
} from "./protocol.ts";
