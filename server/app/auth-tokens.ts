import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import type { AuthTokens } from "./auth.ts";
import { isLoopbackHost } from "./auth.ts";
import { AUTH_CONFIG_ERRORS, AuthConfigError } from "./errors.ts";

/** Shortest token accepted from the config, the environment or tokens.json. */
export const MIN_TOKEN_LENGTH = 16;

export const TOKENS_FILE = "tokens.json";

/** `<runDir>/tokens.json`: written by `serve` / `train` (mode 0600) when no token is set; read back on the next start. */
export const TokensFileSchema = z.object({
  adminToken: z.string().min(MIN_TOKEN_LENGTH).optional(),
  clientTokens: z.array(z.string().min(MIN_TOKEN_LENGTH)).optional(),
});

export type TokenSource = "config" | "env" | "file" | "generated" | "none";

export interface ResolvedTokens extends AuthTokens {
  adminToken: string;
  /** Where each came from. */
  sources: { admin: TokenSource; client: TokenSource };
  /** `<runDir>/tokens.json`, whether or not it was used. */
  file: string;
  /** True when this call generated the tokens (and wrote `file`). */
  generated: boolean;
}

export interface ResolveTokensOptions {
  /** The run config's `server.auth`. */
  auth: { adminToken?: string | undefined; clientTokens?: readonly string[] | undefined };
  runDir: string;
  /** The address the server will listen on: beyond loopback, tokens must already exist. */
  host: string;
  /** Default process.env (`AGENTJET_ADMIN_TOKEN`, `AGENTJET_CLIENT_TOKEN`). */
  env?: NodeJS.ProcessEnv;
  /** Default: 32 random bytes, base64url, with the role as a prefix. */
  generate?: (role: "admin" | "client") => string;
}

export function generateToken(role: "admin" | "client"): string {
  return `aj-${role}-${randomBytes(32).toString("base64url")}`;
}

function checkLength(token: string, where: string): string {
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new AuthConfigError(AUTH_CONFIG_ERRORS.weakToken, `${where} is ${token.length} characters; tokens need at least ${MIN_TOKEN_LENGTH}`);
  }
  return token;
}

function readTokensFile(file: string): z.infer<typeof TokensFileSchema> {
  if (!existsSync(file)) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new AuthConfigError(AUTH_CONFIG_ERRORS.tokensFile, `${file} is not JSON: ${(err as Error).message}`, { cause: err });
  }
  const parsed = TokensFileSchema.safeParse(raw);
  if (!parsed.success) {
    throw new AuthConfigError(AUTH_CONFIG_ERRORS.tokensFile, `${file}: ${z.prettifyError(parsed.error)}`, { cause: parsed.error });
  }
  return parsed.data;
}

/**
 * The control-plane tokens of a server. Each of the admin token and the client tokens comes from the
 * first that sets it: the run config (`server.auth`), the environment (`AGENTJET_ADMIN_TOKEN`,
 * `AGENTJET_CLIENT_TOKEN`), `<runDir>/tokens.json`. With no admin token anywhere, one is generated
 * (and a client token, when none is set either) and written to tokens.json with mode 0600. That is
 * refused when the server listens beyond loopback: remote clients need tokens someone chose to share.
 */
export function resolveAuthTokens(opts: ResolveTokensOptions): ResolvedTokens {
  const env = opts.env ?? process.env;
  const file = join(opts.runDir, TOKENS_FILE);
  const saved = readTokensFile(file);

  let admin: { token: string; source: TokenSource } | null = null;
  if (opts.auth.adminToken !== undefined) admin = { token: checkLength(opts.auth.adminToken, "server.auth.adminToken"), source: "config" };
  else if (env.AGENTJET_ADMIN_TOKEN) admin = { token: checkLength(env.AGENTJET_ADMIN_TOKEN, "AGENTJET_ADMIN_TOKEN"), source: "env" };
  else if (saved.adminToken !== undefined) admin = { token: saved.adminToken, source: "file" };

  let clients: { tokens: string[]; source: TokenSource } | null = null;
  if (opts.auth.clientTokens !== undefined) clients = { tokens: opts.auth.clientTokens.map((t, i) => checkLength(t, `server.auth.clientTokens[${i}]`)), source: "config" };
  else if (env.AGENTJET_CLIENT_TOKEN) clients = { tokens: [checkLength(env.AGENTJET_CLIENT_TOKEN, "AGENTJET_CLIENT_TOKEN")], source: "env" };
  else if (saved.clientTokens !== undefined) clients = { tokens: saved.clientTokens, source: "file" };

  if (admin !== null) {
    return { adminToken: admin.token, clientTokens: clients?.tokens ?? [], sources: { admin: admin.source, client: clients?.source ?? "none" }, file, generated: false };
  }
  if (!isLoopbackHost(opts.host)) {
    throw new AuthConfigError(
      AUTH_CONFIG_ERRORS.remoteWithoutTokens,
      `refusing to listen on ${opts.host} without tokens: anyone who reaches the port could run the control plane. ` +
        `Set server.auth.adminToken and server.auth.clientTokens in the run config, or AGENTJET_ADMIN_TOKEN and AGENTJET_CLIENT_TOKEN, ` +
        `or write ${file} ({ "adminToken": "...", "clientTokens": ["..."] }); or listen on 127.0.0.1`,
    );
  }
  const generate = opts.generate ?? generateToken;
  const adminToken = generate("admin");
  const clientTokens = clients?.tokens ?? [generate("client")];
  mkdirSync(opts.runDir, { recursive: true });
  writeFileSync(file, `${JSON.stringify({ ...saved, adminToken, ...(clients ? {} : { clientTokens }) }, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { adminToken, clientTokens, sources: { admin: "generated", client: clients?.source ?? "generated" }, file, generated: true };
}

/** What `serve` / `train` print at start: where the tokens are (never the tokens themselves). */
export function describeTokens(t: ResolvedTokens): string {
  const where = (s: TokenSource): string =>
    s === "config" ? "from the run config" : s === "env" ? "from the environment" : s === "file" ? `from ${t.file}` : s === "generated" ? `generated into ${t.file} (mode 0600)` : "none";
  const { admin, client } = t.sources;
  if (admin === client) return `control-plane tokens (admin and client) ${where(admin)}`;
  return `control-plane tokens: admin ${where(admin)}; client ${client === "none" ? "none (the admin token serves clients too)" : where(client)}`;
}
