/** The fastify app (`buildServer`, `closeServer`), control-plane auth and its tokens, and the context routes share. */
export {
  describeTokens,
  MIN_TOKEN_LENGTH,
  resolveAuthTokens,
  TOKENS_FILE,
  type ResolvedTokens,
  type ResolveTokensOptions,
  type TokenSource,
} from "./auth-tokens.ts";
export { createHostCheck, installAuth, isLoopbackHost, type HostCheck, type AuthOptions, type AuthTokens, type Caller, type RouteAuth, type RouteEntry } from "./auth.ts";
export { buildServer, type AgentJetHandle, type BuildServerOptions } from "./build-server.ts";
export { closeServer } from "./close-server.ts";
export { connectionHostCheck, createAccessLog, installRawRoute, type RawRoute } from "./raw-chat-route.ts";
export { answerError, answerFrameworkError } from "./fastify-errors.ts";
export type { ErrorLog } from "../openai/completions.ts";
export { AuthConfigError, RouteAuthMissingError } from "./errors.ts";
export type { PolicyRuntime, SamplingDefaults, ServerContext } from "./server-context.ts";
