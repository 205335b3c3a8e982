import { AgentJetServerError } from "../errors.ts";

/** A route registered without `config.auth`: refused when it is added, so the server never starts with it. */
export class RouteAuthMissingError extends AgentJetServerError {
  constructor(method: string, url: string) {
    super(
      "AJ_ERR_ROUTE_AUTH_MISSING",
      `route ${method} ${url} declares no auth; give it config: { auth: "public" | "episode-key" | "client" | "admin" }`,
    );
  }
}

/** The tokens cannot be resolved (a bad tokens.json, a too-short token) or do not allow this bind. */
export class AuthConfigError extends AgentJetServerError {}

export const AUTH_CONFIG_ERRORS = {
  /** Listening beyond loopback with tokens this process would only now generate. */
  remoteWithoutTokens: "AJ_ERR_AUTH_REMOTE_WITHOUT_TOKENS",
  tokensFile: "AJ_ERR_AUTH_TOKENS_FILE",
  weakToken: "AJ_ERR_AUTH_WEAK_TOKEN",
} as const;
