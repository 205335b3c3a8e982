import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { HttpError, missingApiKey } from "../openai/errors.ts";
import { RouteAuthMissingError } from "./errors.ts";

/**
 * What a route needs, declared in its options (`config: { auth }`):
 * - `public`: nothing (`GET /v1/models`);
 * - `episode-key`: the route checks its own episode key (the OpenAI routes); a request with no
 *   Authorization header at all is refused here, before its body is read (401 `AJ_ERR_INVALID_API_KEY`);
 * - `client`: a client token or the admin token (begin, claim, end, abort episodes; `/swarm`);
 * - `admin`: the admin token (configure, start and stop the engine; read recorded data).
 */
export type RouteAuth = "public" | "episode-key" | "client" | "admin";
export const ROUTE_AUTH: readonly RouteAuth[] = ["public", "episode-key", "client", "admin"];

/** Who presented a control-plane token. `tokenId` names the token (never its text), so a client id can be bound to it. */
export interface Caller {
  role: "admin" | "client";
  tokenId: string;
}

/** One entry of the route table, as the onRoute hook saw it. */
export interface RouteEntry {
  method: string;
  url: string;
  auth: RouteAuth;
}

export interface AuthTokens {
  /** Accepted on every route; null: no admin routes can be called. */
  adminToken: string | null;
  clientTokens: readonly string[];
}

export interface AuthOptions {
  tokens: AuthTokens;
  /** Host names accepted on loopback connections besides localhost, 127.0.0.0/8 and ::1 (DNS-rebinding guard). */
  allowedHosts?: readonly string[];
}

declare module "fastify" {
  interface FastifyContextConfig {
    auth?: RouteAuth;
  }
  interface FastifyRequest {
    /** Set by the auth hook on `client` and `admin` routes. */
    agentjetCaller: Caller | null;
  }
}

const digest = (token: string): Buffer => createHash("sha256").update(token).digest();

/** A short, stable name of a token for logs and bindings; not reversible. */
export function tokenId(role: Caller["role"], token: string): string {
  return `${role}:${digest(token).toString("hex").slice(0, 12)}`;
}

const fail = (status: number, code: string, message: string): HttpError => new HttpError(status, code, message);

/** True for addresses and names only this machine can reach: localhost, 127.0.0.0/8, ::1 (bracketed or not). */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1");
  return h === "localhost" || h === "::1" || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The host of a `Host` header, lower-cased, without its port or IPv6 brackets. */
function hostOfHeader(header: string): string {
  const a = header.trim().toLowerCase();
  if (a.startsWith("[")) return a.slice(1, a.includes("]") ? a.indexOf("]") : undefined);
  const colon = a.lastIndexOf(":");
  return colon === -1 ? a : a.slice(0, colon);
}

/** Whether a request's `Host` names this server (the DNS-rebinding guard), given the address it came in on and its Host header. */
export type HostCheck = (localAddress: string | undefined, host: string | undefined) => boolean;

/**
 * The host check of every request: on a loopback listener (or in process, `inject`, which has no local
 * address) the Host must be a loopback name or one of `allowedHosts`; on any other listener every Host passes.
 */
export function createHostCheck(allowedHosts: readonly string[]): HostCheck {
  const allowed = new Set(allowedHosts.map((h) => h.trim().toLowerCase()));
  return (local, host) => {
    if (local !== undefined && !isLoopbackHost(local)) return true;
    const name = host === undefined ? "" : hostOfHeader(host);
    return isLoopbackHost(name) || allowed.has(name);
  };
}

function bearerToken(request: FastifyRequest): string | null {
  const h = request.headers.authorization;
  if (h === undefined) return null;
  const m = /^Bearer ([\x21-\x7e]+)$/i.exec(h);
  if (!m) throw fail(401, "AJ_ERR_AUTH_INVALID", "malformed Authorization header; expected 'Bearer <token>'");
  return m[1]!;
}

/**
 * The control plane's guard: one onRoute hook refuses routes that declare no auth, one onRequest hook
 * enforces what each declares, before any body is read. Register it before any route.
 *
 * Every request that arrives on a loopback address must name a loopback host (or an allowed one) in
 * `Host`, so a web page that rebinds its DNS name to 127.0.0.1 gets nothing. On `client` and `admin`
 * routes a cross-origin `Origin` is refused and POSTs must carry a JSON body, so a browser cannot send
 * a "simple" (form or bodiless) request that reaches a handler.
 *
 * Returns the route table, filled as routes are added (the route-table test walks it).
 */
export function installAuth(app: FastifyInstance, opts: AuthOptions): readonly RouteEntry[] {
  const admin = opts.tokens.adminToken === null ? null : { digest: digest(opts.tokens.adminToken), caller: { role: "admin", tokenId: tokenId("admin", opts.tokens.adminToken) } as Caller };
  const clients = opts.tokens.clientTokens.map((t) => ({ digest: digest(t), caller: { role: "client", tokenId: tokenId("client", t) } as Caller }));
  const hostAllowed = createHostCheck(opts.allowedHosts ?? []);

  const identify = (token: string): Caller | null => {
    const d = digest(token);
    let found: Caller | null = null;
    // Compare against every token, so the time taken does not say which one (or whether) matched.
    if (admin && timingSafeEqual(admin.digest, d)) found = admin.caller;
    for (const c of clients) if (timingSafeEqual(c.digest, d) && found === null) found = c.caller;
    return found;
  };

  const routes: RouteEntry[] = [];
  app.decorateRequest("agentjetCaller", null);
  app.addHook("onRoute", (route) => {
    const auth = route.config?.auth;
    if (auth === undefined || !ROUTE_AUTH.includes(auth)) throw new RouteAuthMissingError(String(route.method), route.url);
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, auth });
  });
  app.addHook("onRequest", async (request) => {
    const host = request.headers.host;
    if (!hostAllowed(request.socket.localAddress, host)) {
      throw fail(403, "AJ_ERR_HOST_NOT_ALLOWED", `Host '${host ?? ""}' is not a name of this server (add it to server.allowedHosts)`);
    }
    const auth = request.routeOptions.config.auth;
    // No auth: the not-found handler (routes without one are refused at start-up).
    if (auth === undefined || auth === "public") return;
    // The route checks its key itself, once its body is read; no key at all is refused before that (a
    // huge body without one got 413, not 401)
    if (auth === "episode-key") {
      if (!request.headers.authorization) throw missingApiKey();
      return;
    }

    const origin = request.headers.origin;
    if (origin !== undefined && !sameOrigin(origin, request.headers.host)) {
      throw fail(403, "AJ_ERR_CROSS_ORIGIN", `cross-origin request from '${origin}' refused`);
    }
    const token = bearerToken(request);
    if (token === null) throw fail(401, "AJ_ERR_AUTH_MISSING", `${request.method} ${request.routeOptions.url} needs a token (Authorization: Bearer <${auth} token>)`);
    const caller = identify(token);
    if (caller === null) throw fail(401, "AJ_ERR_AUTH_INVALID", "unknown token");
    if (auth === "admin" && caller.role !== "admin") throw fail(403, "AJ_ERR_AUTH_FORBIDDEN", `${request.method} ${request.routeOptions.url} needs the admin token`);
    if (request.method === "POST" && !isJson(request.headers["content-type"])) {
      throw fail(415, "AJ_ERR_CONTENT_TYPE", "control-plane POSTs take a JSON body (Content-Type: application/json; send {} when there is nothing to say)");
    }
    request.agentjetCaller = caller;
  });
  // A refused WebSocket upgrade was answered on the raw socket the upgrade handed over; nothing else
  // closes that socket (the websocket plugin's own hooks did not run), and it would hold the server's close.
  app.addHook("onResponse", async (request) => {
    if (request.headers.upgrade !== undefined) request.raw.socket.destroy();
  });
  return routes;
}

function sameOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return (url.protocol === "http:" || url.protocol === "https:") && url.host === host.toLowerCase();
}

function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const media = contentType.split(";")[0]!.trim().toLowerCase();
  return media === "application/json";
}
