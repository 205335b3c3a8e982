import { join } from "node:path";
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import type { RunConfig } from "../config/run-config.ts";
import { openRunDb, type RunDb } from "../db/run-db.ts";
import { createEngine } from "../engines/create-engine.ts";
import type { Engine } from "../engines/engine.ts";
import { createFrozenModel, type FrozenModel } from "../engines/frozen.ts";
import type { RewardRange } from "../episodes/check-rewards.ts";
import { createEpisodeStore, type EpisodeStore } from "../episodes/episode-store.ts";
import { episodeRoutes } from "../episodes/routes.ts";
import { transcriptRoute } from "../episodes/transcript-route.ts";
import { checkDepth } from "../openai/check-depth.ts";
import { HttpError, toErrorBody } from "../openai/errors.ts";
import { warmKeySchema } from "../episodes/keys.ts";
import { createCompletions, type ErrorLog } from "../openai/completions.ts";
import { openaiRoutes } from "../openai/routes.ts";
import { warmMaskTables } from "../openai/json-mask.ts";
import { warmRequestSchemas } from "../openai/warm-schemas.ts";
import { createTokenizer } from "../tokenizers/create-tokenizer.ts";
import { type AuthTokens, createHostCheck, installAuth, type RouteEntry } from "./auth.ts";
import { generateToken } from "./auth-tokens.ts";
import { answerFrameworkError, errorHandler } from "./fastify-errors.ts";
import { jsonTextParser, registerJsonBody } from "./json-body.ts";
import { createRawChatRoute, installRawRoute, type RawRoute } from "./raw-chat-route.ts";
import type { PolicyRuntime, ServerContext } from "./server-context.ts";

export interface BuildServerOptions {
  /** The validated run config (policies, frozen models, `server`, `sampling`). */
  config: RunConfig;
  /** Where `run.db` lives. Default: `config.run.dir`. */
  runDir?: string;
  /** Overrides the database file (":memory:" in unit tests). Default `<runDir>/run.db`. */
  dbPath?: string;
  /** Engines by policy name, used instead of building them from the config (tests, the bench, `agentjet train`). */
  engines?: Record<string, Engine>;
  /** For frozen models and external engines. Default: global fetch. */
  fetch?: typeof fetch;
  /** Fastify's logger (pino options or true). Default false. */
  logger?: FastifyServerOptions["logger"];
  /**
   * Where a failed request (a 5xx, a stream that failed) is logged with its cause. Default: fastify's
   * logger. `serve` and `train` pass the service's own, since this app's fastify logger is off there (the
   * service writes the access lines of what it forwards).
   */
  errorLog?: ErrorLog;
  /**
   * Control-plane tokens (`Authorization: Bearer <token>` on every route but the OpenAI ones). `serve` and
   * `train` pass what `resolveAuthTokens` found. Default: random ones, readable on `app.agentjet.auth`.
   */
  auth?: AuthTokens;
  /** Overrides `config.server.keySecret` / `$AGENTJET_KEY_SECRET`. */
  keySecret?: string;
  /** Clock for the episode store, ms. Default Date.now. */
  now?: () => number;
  /** Run the idle-reclaim timer. Default true. */
  reclaimTimer?: boolean;
  /** Declared reward ranges by environment name; episode ends outside them are refused (see `EpisodeStoreOptions`). */
  rewardRanges?: ReadonlyMap<string, RewardRange>;
  /** Host names accepted on loopback binds besides `config.server.allowedHosts`: the names the service gives out as its own. */
  allowedHosts?: readonly string[];
}

/** What `buildServer` hangs on the app for in-process users (the scheduler, the training path). */
export interface AgentJetHandle {
  store: EpisodeStore;
  db: RunDb;
  policies: ReadonlyMap<string, PolicyRuntime>;
  frozen: ReadonlyMap<string, FrozenModel>;
  config: RunConfig;
  /** The tokens the control plane accepts. */
  auth: AuthTokens;
  /** Every route with the auth it declares (filled as routes are added, `/swarm` included). */
  routes: readonly RouteEntry[];
  /**
   * The chat route's raw path (`raw-chat-route.ts`), for a server that forwards requests to this app
   * (`agentjet serve`) to put in front of its own fastify; null once this app is closing.
   */
  rawChat(): RawRoute | null;
}

declare module "fastify" {
  interface FastifyInstance {
    agentjet: AgentJetHandle;
  }
}

/**
 * Builds the swarm server (OpenAI routes, episode routes, tracker) without listening. Close the app to
 * close engines and the database.
 */
export async function buildServer(opts: BuildServerOptions): Promise<FastifyInstance> {
  const { config } = opts;
  const runDir = opts.runDir ?? config.run.dir;
  const db = openRunDb(opts.dbPath ?? join(runDir, "run.db"));
  const keySecret = opts.keySecret ?? config.server.keySecret;
  const app = Fastify({ logger: opts.logger ?? false, bodyLimit: config.server.bodyLimitBytes, frameworkErrors: answerFrameworkError });
  const errorLog = opts.errorLog ?? app.log;
  const store = createEpisodeStore({
    db,
    idleTimeoutS: config.server.idleTimeoutS,
    policies: Object.keys(config.policies),
    frozen: Object.keys(config.frozen),
    ...(keySecret === undefined ? {} : { keySecret }),
    ...(opts.now === undefined ? {} : { now: opts.now }),
    ...(opts.reclaimTimer === undefined ? {} : { reclaimTimer: opts.reclaimTimer }),
    ...(opts.rewardRanges === undefined ? {} : { rewardRanges: opts.rewardRanges }),
    ...(config.run.deterministic ? { samplingSeed: config.run.seed } : {}),
    // found by the tracker's batch timer: no request answers with it
    onRecordingError: (err) => errorLog.error({ err }, "recording calls to run.db failed; every episode end from now on fails with it"),
  });
  const deps = opts.fetch === undefined ? {} : { fetch: opts.fetch };
  const policies = new Map<string, PolicyRuntime>();
  for (const [name, policy] of Object.entries(config.policies)) {
    const tokenizer = createTokenizer(policy.tokenizer);
    const engine = opts.engines?.[name] ?? (await createEngine(policy, tokenizer, deps));
    // structured output's tables, built at start-up rather than in the first structured request
    if (engine.structuredOutput === "mask") warmMaskTables(tokenizer);
    policies.set(name, { name, engine, tokenizer });
  }
  const frozen = new Map<string, FrozenModel>();
  for (const [name, model] of Object.entries(config.frozen)) frozen.set(name, createFrozenModel(name, model, deps));

  // zod's first parse of each schema compiles it (ms): at start-up, not in a request
  warmRequestSchemas();
  warmKeySchema();
  registerJsonBody(app);
  const ctx: ServerContext = { store, policies, frozen, sampling: config.sampling };
  const auth: AuthTokens = opts.auth ?? { adminToken: generateToken("admin"), clientTokens: [generateToken("client")] };
  const allowedHosts = [...config.server.allowedHosts, ...(opts.allowedHosts ?? [])];
  const routes = installAuth(app, { tokens: auth, allowedHosts });
  const calls = createCompletions(ctx, errorLog);
  const chatRoute = createRawChatRoute({ calls, hostAllowed: createHostCheck(allowedHosts), bodyLimit: config.server.bodyLimitBytes, parseJson: jsonTextParser(app), log: app.log, errorLog });
  // once the app closes, fastify answers (503 while it closes, as it does for every route)
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  const rawChat = (): RawRoute | null => (closing ? null : chatRoute);
  installRawRoute(app.server, rawChat);
  app.decorate("agentjet", { store, db, policies, frozen, config, auth, routes, rawChat });

  app.setErrorHandler(errorHandler(opts.errorLog));
  // JSON nested deeper than any real request would overflow the stack later (stringifying it): a 400 first.
  app.addHook("preValidation", async (request) => checkDepth(request.body, "body"));
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send(toErrorBody(new HttpError(404, "AJ_ERR_ROUTE_NOT_FOUND", `no route ${request.method} ${request.url}`))),
  );
  await app.register(async (scope) => openaiRoutes(scope, ctx, calls));
  await app.register(async (scope) => episodeRoutes(scope, { store, maxRegistered: config.server.maxRegisteredEpisodes }));
  await app.register(async (scope) => transcriptRoute(scope, store));
  app.addHook("onClose", async () => {
    store.close();
    for (const p of policies.values()) await p.engine.close();
    db.close();
  });
  return app;
}
