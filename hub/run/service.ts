import type { IncomingMessage } from "node:http";
import { hostname } from "node:os";
import type { AddressInfo } from "node:net";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from "fastify";
import {
  answerError,
  answerFrameworkError,
  closeServer,
  connectionHostCheck,
  createAccessLog,
  createHostCheck,
  describeTokens,
  installAuth,
  installRawRoute,
  isLoopbackHost,
  resolveAuthTokens,
  type RawRoute,
  type ResolvedTokens,
  type RouteEntry,
} from "../../server/app/index.ts";
import type { RunConfig } from "../../server/config/index.ts";
import { HttpError, toErrorBody } from "../../server/openai/index.ts";
import { ClientActivity } from "../dashboard/client-activity.ts";
import type { DashboardSource } from "../dashboard/dashboard-source.ts";
import { dashboardRoutes } from "../dashboard/dashboard-routes.ts";
import { LiveFeed } from "../dashboard/live-feed.ts";
import { LoginCodes } from "../dashboard/login-codes.ts";
import { swarmPlugin } from "../swarm/plugin.ts";
import { readLatestCheckpoint } from "../train/checkpoint.ts";
import { StorageError } from "../train/errors.ts";
import type { ProgressSink } from "../train/progress.ts";
import { engineRoutes } from "./engine-routes.ts";
import { type EngineState, type EngineStatus, engineStateError } from "./engine-status.ts";
import { type OpenedRun, type OpenRunOptions, openRun } from "./open-run.ts";
import { isRunPath } from "./run-routes.ts";
import type { RunResult } from "./run-loop.ts";
import { SwarmRelay } from "./swarm-relay.ts";

export type ServiceLog = (level: "info" | "warn" | "error", message: string, fields?: Record<string, unknown>) => void;

export interface ServiceOptions {
  /** Address to listen on (`server.host`). */
  host: string;
  /** Port; 0 picks a free one. */
  port: number;
  /** Where environments are installed and relative paths resolve. */
  projectDir: string;
  /** Overrides the config's `run.dir`. */
  runDir?: string;
  /**
   * The address clients reach this server at, `http://host:port` (agents get `<publicUrl>/v1`). Default:
   * the bound address, or this machine's host name when bound to every interface.
   */
  publicUrl?: string;
  /** The run config to train with; without one the service starts offline and waits for `POST /v1/engine/config`. */
  config?: RunConfig;
  /**
   * Control-plane tokens. Default: `resolveAuthTokens` over the config's `server.auth`, the environment
   * and `<runDir>/tokens.json` (generated there when none is set; refused beyond loopback). They belong
   * to the service: a config sent later does not change them.
   */
  tokens?: ResolvedTokens;
  /** Host names accepted on loopback binds besides localhost (default: the config's `server.allowedHosts`). */
  allowedHosts?: readonly string[];
  /** Fastify's logger for the service (pino options or true). Default false. */
  logger?: FastifyServerOptions["logger"];
  /** Where engine states and run logs go (default: the fastify logger). */
  log?: ServiceLog;
  /** How each run shows progress (default: nothing beyond `log`). */
  progress?: () => ProgressSink;
  /** Per-run options (`agentjet train`: local clients, the report, a clock). */
  run?: Partial<Pick<OpenRunOptions, "localClients" | "report" | "now" | "engines" | "onEvent">>;
}

const silent: ProgressSink = { event: () => undefined, fill: () => undefined, close: () => undefined };

/**
 * The training service: one listening server for `agentjet serve` and `agentjet train`. It owns the
 * port, `/swarm` (through a relay, so clients stay connected while the engine is offline or
 * restarting) and the engine control routes (`/v1/engine/...`), and forwards every other request to
 * the run that is going (OpenAI routes, episodes), assembled by `openRun` -> `assembleRun`.
 * Engine states: offline -> booting -> rolling <-> draining -> syncing -> rolling; stop -> offline.
 */
export class TrainingService {
  readonly app: FastifyInstance;
  readonly #o: ServiceOptions;
  readonly #relay = new SwarmRelay(new ClientActivity());
  /** Every run's progress and events, for the dashboard and `/metrics`. */
  readonly #feed = new LiveFeed();
  readonly #loginCodes = new LoginCodes();
  readonly #log: ServiceLog;
  readonly #tokens: ResolvedTokens;
  #routes: readonly RouteEntry[] = [];
  #config: RunConfig | null;
  #booting = false;
  /** Aborts the run that is booting or going (a close while it boots stops it as soon as it can). */
  #abort: AbortController | null = null;
  #boot: Promise<void> | null = null;
  #run: OpenedRun | null = null;
  #runDir: string | null = null;
  #starts = 0;
  #lastRun: EngineStatus["lastRun"] = null;
  #error: string | null = null;
  #lastState: EngineState = "offline";
  #ended: Promise<RunResult> | null = null;
  #origin = "";

  private constructor(app: FastifyInstance, o: ServiceOptions, tokens: ResolvedTokens) {
    this.app = app;
    this.#o = o;
    this.#tokens = tokens;
    this.#config = o.config ?? null;
    this.#log = o.log ?? ((level, message, fields) => app.log[level](fields ?? {}, message));
  }

  /** Builds the service and listens; with `config`, call `start()` to train. */
  static async listen(o: ServiceOptions): Promise<TrainingService> {
    const runDir = resolve(o.projectDir, o.runDir ?? o.config?.run.dir ?? "runs/latest");
    let tokens: ResolvedTokens;
    try {
      tokens = o.tokens ?? resolveAuthTokens({ auth: o.config?.server.auth ?? {}, runDir, host: o.host });
    } catch (err) {
      // Writing tokens.json is the run directory's first write: a file-system failure there is a storage error.
      if (typeof (err as NodeJS.ErrnoException).code === "string" && (err as NodeJS.ErrnoException).syscall !== undefined) {
        throw new StorageError(runDir, "create the run directory", err);
      }
      throw err;
    }
    const app = Fastify({ logger: o.logger ?? false, bodyLimit: 16 * 1024 * 1024, frameworkErrors: answerFrameworkError });
    const service = new TrainingService(app, o, tokens);
    // The same tokens guard the run's routes (buildServer installs the hook there too).
    const allowedHosts = [...(o.allowedHosts ?? o.config?.server.allowedHosts ?? []), ...ownHostNames(o)];
    service.#routes = installAuth(app, { tokens, allowedHosts });
    // The run's raw chat route, at this service's HTTP server (past both fastify apps; see
    // server/app/raw-chat-route.ts); what it does not take goes through fastify and on to the run, as below.
    installRawRoute(app.server, service.#forwardedChat(connectionHostCheck(createHostCheck(allowedHosts)), app.log));
    app.setErrorHandler(answerError);
    // Every route this app does not have belongs to the run (OpenAI, episodes): forwarded untouched,
    // before its body is read, so the run's own limits, hooks and errors apply.
    app.addHook("onRequest", (request, reply, done) => {
      if (!request.is404) return done();
      const run = service.#run;
      if (!run || service.#booting) {
        // a path no run serves (a typo, /v1/swarm from a server URL ending in /v1) is not "offline"
        if (!isRunPath(request.url)) {
          void reply.code(404).send(toErrorBody(new HttpError(404, "AJ_ERR_ROUTE_NOT_FOUND", `no route ${request.method} ${request.url.split("?", 1)[0]}`)));
          return;
        }
        void reply.code(503).send(toErrorBody(new HttpError(503, "AJ_ERR_ENGINE_OFFLINE", notServingMessage(service.state()))));
        return;
      }
      if (run.loop.phase() === "stopping") {
        // the run's app is closing: its own answer would be fastify's bare 503, not our shape
        void reply.code(503).send(toErrorBody(new HttpError(503, "AJ_ERR_ENGINE_OFFLINE", "the engine is stopping: its open episodes are aborted; begin new ones once it is started again")));
        return;
      }
      reply.hijack();
      run.app.routing(request.raw, reply.raw);
    });
    await app.register(swarmPlugin, { scheduler: service.#relay });
    await app.register(async (scope) => engineRoutes(scope, service));
    await app.register(async (scope) =>
      dashboardRoutes(scope, service.#dashboardSource(), { login: { codes: service.#loginCodes, adminToken: tokens.adminToken } }),
    );
    const address = await app.listen({ host: o.host, port: o.port });
    const port = (app.server.address() as AddressInfo).port;
    service.#origin = (o.publicUrl ?? defaultOrigin(o.host, port)).replace(/\/+$/, "");
    service.#log("info", "agentjet service listening", { address, origin: service.#origin, state: service.state() });
    return service;
  }

  /** Where clients reach the service (`http://host:port`). */
  origin(): string {
    return this.#origin;
  }

  /**
   * A link to the dashboard with a fresh one-time login code in its fragment (which the browser never
   * sends; the page trades it for the admin token once), so the link can be printed and logged. On a
   * loopback bind it names the loopback address.
   */
  dashboardUrl(): string {
    const base = isLoopbackHost(this.#o.host) ? this.localOrigin() : this.#origin;
    return `${base}/dashboard#code=${this.#loginCodes.issue()}`;
  }

  /** The control-plane tokens (the admin token configures; client tokens run episodes and connect to /swarm). */
  tokens(): ResolvedTokens {
    return this.#tokens;
  }

  /** Every route this service answers with the auth it declares: its own, then the running run's. */
  routes(): RouteEntry[] {
    return [...this.#routes, ...(this.#run ? this.#run.app.agentjet.routes : [])];
  }

  /** The local origin (loopback) of the listening socket, for in-process clients. */
  localOrigin(): string {
    return `http://127.0.0.1:${(this.app.server.address() as AddressInfo).port}`;
  }

  state(): EngineState {
    if (this.#booting) return "booting";
    const run = this.#run;
    if (!run) return "offline";
    const phase = run.loop.phase();
    return phase === "rolling" ? "rolling" : phase === "training" ? "syncing" : "draining";
  }

  status(): EngineStatus {
    const run = this.#run;
    const state = this.state();
    this.#noteState(state);
    return {
      state,
      step: run?.loop.step() ?? this.#lastRun?.step ?? 0,
      versions: run && !this.#booting ? run.loop.versions() : {},
      configured: this.#config !== null,
      starts: this.#starts,
      runDir: this.#runDir,
      clients: this.#relay.clients(),
      // what a weight update waits for: scheduled and client-driven episodes alike
      inFlight: run && !this.#booting ? run.coordinator.inFlight().length : 0,
      waiting: run && !this.#booting ? run.loop.waiting() : [],
      lastRun: this.#lastRun,
      error: this.#error,
    };
  }

  config(): RunConfig | null {
    return this.#config;
  }

  /** Sets the run config (only while offline). */
  configure(config: RunConfig): void {
    if (this.state() !== "offline") throw engineStateError(this.state(), `the engine is ${this.state()}; stop it before configuring`);
    this.#config = config;
    this.#log("info", "engine configured", { policies: Object.keys(config.policies), environments: config.environments.map((e) => e.name), strategy: config.batching.strategy });
  }

  /**
   * Starts the engine with the config (offline -> booting -> rolling). The run directory continues from
   * its newest checkpoint when it has one (a restart after `stop`), or from step 0 when its run stopped
   * before one (a server killed early), unless `resume` says otherwise.
   */
  start(options: { resume?: boolean; signal?: AbortSignal; progress?: ProgressSink } = {}): Promise<void> {
    const boot = this.#start(options);
    this.#boot = boot.catch(() => undefined);
    return boot;
  }

  /** The running run's raw chat route behind this service's own Host check; while no run serves, it takes nothing (fastify answers, 503). */
  #forwardedChat(hostAllowed: (req: IncomingMessage) => boolean, log: FastifyBaseLogger): () => RawRoute | null {
    // the access lines this service's fastify wrote for every request it forwarded
    const accessLog = createAccessLog(log);
    const route: RawRoute = (req, res) => {
      const run = this.#run;
      if (!run || this.#booting || run.loop.phase() === "stopping") return false;
      const inner = run.app.agentjet.rawChat();
      if (inner === null || !hostAllowed(req) || !inner(req, res)) return false;
      accessLog(req, res);
      return true;
    };
    return () => route;
  }

  async #start(options: { resume?: boolean; signal?: AbortSignal; progress?: ProgressSink }): Promise<void> {
    const config = this.#config;
    if (!config) throw new HttpError(409, "AJ_ERR_ENGINE_NOT_CONFIGURED", "no run config: POST /v1/engine/config first (or serve --config)");
    if (this.state() !== "offline") throw engineStateError(this.state(), `the engine is already ${this.state()}`);
    const runDir = resolve(this.#o.projectDir, this.#o.runDir ?? config.run.dir);
    // A damaged checkpoint is resumed, which refuses it and says why (not "the directory holds a run").
    // A run killed before its first checkpoint (run.db, no step kept) is played again from step 0, as
    // `agentjet train --resume` does: serve has no --resume, and a restarted server continues its directory.
    const resume = options.resume ?? (readLatestCheckpoint(runDir).kind !== "none" || existsSync(join(runDir, "run.db")));
    this.#booting = true;
    const abort = new AbortController();
    this.#abort = abort;
    const signal = options.signal ? AbortSignal.any([options.signal, abort.signal]) : abort.signal;
    this.#error = null;
    this.#runDir = runDir;
    this.#noteState("booting");
    try {
      const run = await openRun(
        {
          ...this.#o.run,
          config,
          runDir,
          resume,
          projectDir: this.#o.projectDir,
          progress: this.#feed.tee(options.progress ?? this.#o.progress?.() ?? silent),
          localClients: this.#o.run?.localClients ?? 0,
          signal,
        },
        {
          origin: () => this.#origin,
          localOrigin: () => this.localOrigin(),
          attach: (scheduler, coordinator) => this.#relay.attach(scheduler, coordinator),
          tokens: this.#tokens,
          allowedHosts: ownHostNames(this.#o),
          tokensNote: describeTokens(this.#tokens),
          log: (level, message, fields) => this.#log(level, message, fields),
        },
      );
      this.#run = run;
      this.#starts += 1;
      // Every episode transition moves the dashboard's episode list.
      const unwatch = this.#feed.watchEpisodes(run.app.agentjet.store);
      // Phase changes (rolling, draining, syncing) reach the log without anyone polling the status.
      const watch = setInterval(() => this.#noteState(this.state()), 100);
      watch.unref();
      void run.finished
        .finally(() => {
          clearInterval(watch);
          unwatch();
        })
        .catch(() => undefined);
      this.#ended = run.finished.then(
        (result) => this.#onEnded(run, result),
        (err: unknown) => {
          // The run crashed (not a failed run, which resolves): offline, and whoever awaits hears why.
          this.#onEnded(run, { reason: "failed", step: run.loop.step(), versions: {}, runDir, error: err });
          throw err;
        },
      );
      this.#ended.catch(() => undefined);
    } catch (err) {
      this.#error = err instanceof Error ? err.message : String(err);
      this.#log("error", `engine start failed: ${this.#error}`);
      throw err;
    } finally {
      this.#booting = false;
    }
    this.#noteState(this.state());
  }

  /** A client agrees to sync (`any-client` / `all-clients`); false while offline. */
  agreeSync(clientId: string): boolean {
    const run = this.#run;
    if (!run || this.#booting) return false;
    run.coordinator.touchClient(clientId);
    run.coordinator.agreeSync(clientId);
    return true;
  }

  /** Resolves when the current run ends (done, stopped or failed), rejects when it crashed; null when none is going. */
  whenEnded(): Promise<RunResult> | null {
    return this.#ended;
  }

  /** Stops the engine cleanly (in-flight episodes aborted, a final checkpoint); resolves once offline. */
  async stop(): Promise<RunResult | null> {
    const run = this.#run;
    if (!run) return null;
    this.#log("info", "engine stopping", { step: run.loop.step() });
    run.loop.stop();
    return this.#ended;
  }

  /** Stops the engine if it runs (or boots), then closes the listening server. */
  async close(): Promise<void> {
    this.#abort?.abort();
    await this.#boot;
    await this.stop();
    await closeServer(this.app);
  }

  #dashboardSource(): DashboardSource {
    return {
      status: () => this.status(),
      config: () => this.#config,
      run: () => {
        const run = this.#run;
        // The run closes its server, run.db with it, before it ends (the report is written after):
        // from then on the dashboard reads the file, as it does offline.
        if (!run || this.#booting || !run.app.agentjet.db.open) return null;
        const { config, db, store, policies } = run.app.agentjet;
        return { config, db, store, policies, scheduler: run.scheduler, pool: run.pool, envs: run.envs };
      },
      // Before any start: the run directory the service was given, so a finished run can be browsed.
      runDir: () => this.#runDir ?? resolve(this.#o.projectDir, this.#o.runDir ?? this.#config?.run.dir ?? "runs/latest"),
      feed: this.#feed,
      clients: () => this.#relay.activity.list(),
    };
  }

  #onEnded(run: OpenedRun, result: RunResult): RunResult {
    if (this.#run === run) this.#run = null;
    this.#ended = null;
    const error = result.error === undefined ? undefined : result.error instanceof Error ? result.error.message : String(result.error);
    this.#lastRun = { reason: result.reason, step: result.step, ...(error !== undefined ? { error } : {}) };
    this.#log(result.reason === "failed" ? "error" : "info", `engine offline: the run ${result.reason === "done" ? "is done" : result.reason}`, {
      step: result.step,
      versions: result.versions,
      ...(error !== undefined ? { error } : {}),
    });
    this.#noteState("offline");
    return result;
  }

  /** Logs each change of state once. */
  #noteState(state: EngineState): void {
    if (state === this.#lastState) return;
    this.#lastState = state;
    this.#log("info", `engine ${state}`, { state });
  }
}

/**
 * The host names this service gives out as its own (agents' base URL, the clients' server URL): its
 * `publicUrl`'s, or this machine's name when bound to every interface. Accepted in `Host` on loopback
 * connections: a machine's name that resolves to a loopback address (Debian's 127.0.1.1) got 403
 * `AJ_ERR_HOST_NOT_ALLOWED` on every agent call of a client on the same machine.
 */
function ownHostNames(o: Pick<ServiceOptions, "host" | "publicUrl">): string[] {
  if (o.publicUrl !== undefined) return [new URL(o.publicUrl).hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase()];
  return isWildcard(o.host) ? [hostname().toLowerCase()] : [];
}

function isWildcard(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "";
}

function defaultOrigin(host: string, port: number): string {
  const name = isWildcard(host) ? hostname() : host.includes(":") ? `[${host}]` : host;
  return `http://${name}:${port}`;
}


/**
 * The 503 message of a run path while no run serves it: booting is on its way (retry), offline waits
 * for an admin client (configure and start it).
 */
export function notServingMessage(state: EngineState): string {
  return state === "booting"
    ? "the engine is booting: retry shortly (GET /v1/engine/status says when it is rolling)"
    : `the engine is ${state}: configure and start it (POST /v1/engine/config, /v1/engine/start)`;
}
