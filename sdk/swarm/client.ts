import { randomUUID } from "node:crypto";
import WebSocket from "ws";
import type { EnvironmentRuntime } from "../../plugins/index.ts";
import { type BackoffOptions, backoffDelay, DEFAULT_BACKOFF } from "../backoff.ts";
import type { ClientEnvironment } from "./client-environment.ts";
import { createDefaultAgentLoop } from "./default-agent-loop.ts";
import { SWARM_CLIENT_ERRORS, SwarmClientError } from "./errors.ts";
import { ModelRewards } from "./model-rewards.ts";
import { runEpisode } from "./run-episode.ts";
import {
  type Assignment,
  type ClientMessage,
  type EnvAnnouncement,
  parseFrame,
  SWARM_FATAL_ERRORS,
  SWARM_PATH,
  SWARM_PROTOCOL_VERSION,
  type ServerMessage,
  ServerMessageSchema,
} from "./protocol.ts";
import type { Workflow } from "./workflow.ts";

export type { ClientEnvironment } from "./client-environment.ts";

export interface SwarmClientOptions {
  /** The swarm server: `ws://host:port/swarm`, or `http://host:port` (the `/swarm` path is added). */
  url: string;
  /** Control-plane token sent on the upgrade (`Authorization: Bearer`). Default: `$AGENTJET_CLIENT_TOKEN`. */
  token?: string;
  /** Kept across reconnects so the scheduler can re-attach running episodes (default: random). */
  clientId?: string;
  environments: readonly ClientEnvironment[];
  /** Episodes at once (default 8). */
  concurrency?: number;
  /** The agent loop for every episode (default: `createDefaultAgentLoop`). */
  workflow?: Workflow;
  /** Called at the start of every episode to get the workflow (hot-swap: `--watch` reloads the file). Wins over `workflow`. */
  loadWorkflow?: () => Workflow | Promise<Workflow>;
  backoff?: Partial<BackoffOptions>;
  /** For the default agent loop's chat calls (default: global fetch). */
  fetch?: typeof fetch;
  onEvent?: (event: ClientEvent) => void;
  /**
   * Send `agree_sync` after every N episodes this client ends with rewards (the `any-client` and
   * `all-clients` batching strategies train when clients agree). Default 0: only a workflow agrees.
   */
  agreeSyncEvery?: number;
}

export type ClientEvent =
  | { type: "connected"; resumed: string[] }
  /** A transient failure (no answer, a 5xx, a dropped socket): retried. `reason` says what happened. */
  | { type: "disconnected"; retryInMs: number; reason: string }
  /** A refusal that retrying cannot fix (no /swarm route, a bad token, another protocol version): the client stops. */
  | { type: "fatal"; code: string; message: string }
  | { type: "episode-start"; assignment: Assignment }
  | { type: "episode-end"; episodeId: string; rewards: Record<string, number>; info: Record<string, unknown> }
  | { type: "episode-abort"; episodeId: string; kind: string; message: string }
  | { type: "cancel"; episodeId: string; reason: string }
  | { type: "error"; code: string; message: string };

interface Running {
  assignment: Assignment;
  /** The environment it runs on, fixed at assignment (a hot swap affects later episodes only). */
  env: ClientEnvironment | undefined;
  /** Until its workflow has returned. */
  active: boolean;
  controller: AbortController;
  /** The end or abort frame, kept until it is sent on a live connection the scheduler re-attached. */
  result: ClientMessage | null;
  done: Promise<void>;
}

/**
 * A swarm client: connects to the scheduler over WebSocket, announces its environments and concurrency,
 * runs assigned episodes with a workflow, reports rewards, heart-beats, and reconnects with backoff.
 * Episodes keep running across a reconnect; their results are sent once the scheduler re-attaches them.
 */
export class SwarmClient {
  readonly clientId: string;
  readonly #o: SwarmClientOptions;
  readonly #url: string;
  readonly #backoff: BackoffOptions;
  readonly #running = new Map<string, Running>();
  #envs: Map<string, ClientEnvironment>;
  #socket: WebSocket | null = null;
  #live = false;
  #tries = 0;
  #stopped = false;
  #heartbeat: NodeJS.Timeout | null = null;
  #reconnect: NodeJS.Timeout | null = null;
  #firstWelcome: { resolve: () => void; reject: (err: Error) => void; promise: Promise<void> };
  #fatal: SwarmClientError | null = null;
  readonly #defaultLoop: Workflow;
  readonly #modelRewards: ModelRewards;
  #endedSinceAgree = 0;

  constructor(options: SwarmClientOptions) {
    this.#o = options;
    this.clientId = options.clientId ?? `client-${randomUUID()}`;
    this.#url = toSwarmUrl(options.url);
    this.#backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.#envs = indexEnvironments(options.environments);
    this.#defaultLoop = createDefaultAgentLoop(options.fetch ? { fetch: options.fetch } : {});
    this.#modelRewards = new ModelRewards(options.fetch ?? fetch);
    let resolve!: () => void;
    let reject!: (err: Error) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    this.#firstWelcome = { resolve, reject, promise };
  }

  /**
   * Connects (retrying transient failures with backoff) and resolves once the scheduler has welcomed
   * this client; rejects with a `SwarmClientError` when the server refuses it for good.
   */
  start(): Promise<void> {
    if (this.#fatal) return Promise.reject(this.#fatal);
    this.#stopped = false;
    if (!this.#socket && !this.#reconnect) this.#connect();
    return this.#firstWelcome.promise;
  }

  /** Disconnects, cancels running episodes and waits for them to wind down. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#reconnect) clearTimeout(this.#reconnect);
    this.#reconnect = null;
    this.#stopHeartbeat();
    for (const r of this.#running.values()) r.controller.abort();
    const socket = this.#socket;
    this.#socket = null;
    this.#live = false;
    socket?.close(1000, "client stopping");
    await Promise.all([...this.#running.values()].map((r) => r.done));
    await this.#modelRewards.close();
  }

  /** Replaces the environment set (a local plugin was rebuilt) and announces it again. */
  setEnvironments(environments: readonly ClientEnvironment[]): void {
    this.#envs = indexEnvironments(environments);
    if (this.#live) this.#sendHello();
  }

  /** Resolves once no episode runs on `runtime` (after `setEnvironments` replaced it, none starts on it again): then it can be closed. */
  async released(runtime: EnvironmentRuntime): Promise<void> {
    for (;;) {
      const users = [...this.#running.values()].filter((r) => r.active && r.env?.runtime === runtime);
      if (users.length === 0) return;
      await Promise.all(users.map((r) => r.done));
    }
  }

  /** Episodes running now. */
  running(): string[] {
    return [...this.#running.keys()];
  }

  announcements(): EnvAnnouncement[] {
    return [...this.#envs.values()].map((e) => ({ name: e.runtime.manifest.name, version: e.runtime.manifest.version, hash: e.hash, dev: e.dev ?? false }));
  }

  #connect(): void {
    this.#reconnect = null;
    if (this.#stopped) return;
    const token = this.#o.token ?? process.env.AGENTJET_CLIENT_TOKEN;
    const socket = new WebSocket(this.#url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    this.#socket = socket;
    let reason: string | null = null;
    socket.on("open", () => this.#sendHello());
    socket.on("message", (data) => this.#onFrame(data.toString()));
    socket.on("unexpected-response", (_request, response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk.slice(0, 4096)));
      response.on("end", () => {
        const status = response.statusCode ?? 0;
        if (status >= 500) reason = `HTTP ${status} from the server`;
        else this.#failFatally(refusal(this.#o.url, status, body));
        socket.terminate();
      });
    });
    socket.on("error", (err: Error & { code?: string }) => {
      // The close event follows; reconnecting happens there.
      reason ??= err.code ?? err.message;
    });
    socket.on("close", (code, why) => {
      if (this.#socket !== socket) return;
      this.#socket = null;
      this.#live = false;
      this.#stopHeartbeat();
      if (this.#stopped || this.#fatal) return;
      const delay = backoffDelay(this.#tries++, this.#backoff);
      this.#o.onEvent?.({ type: "disconnected", retryInMs: delay, reason: why.length > 0 ? `${code} ${why.toString()}` : (reason ?? `closed (${code})`) });
      this.#reconnect = setTimeout(() => this.#connect(), delay);
    });
  }

  #failFatally(err: SwarmClientError): void {
    if (this.#fatal) return;
    this.#fatal = err;
    this.#o.onEvent?.({ type: "fatal", code: err.code, message: err.message });
    this.#firstWelcome.reject(err);
  }

  #sendHello(): void {
    this.#sendRaw({
      type: "hello",
      protocol: SWARM_PROTOCOL_VERSION,
      clientId: this.clientId,
      envs: this.announcements(),
      concurrency: this.#o.concurrency ?? 8,
      running: [...this.#running.keys()],
    });
  }

  #onFrame(data: string): void {
    const parsed = parseFrame(ServerMessageSchema, data);
    if (!parsed.ok) {
      this.#o.onEvent?.({ type: "error", code: "AJ_ERR_CLIENT_BAD_FRAME", message: parsed.error });
      return;
    }
    const message: ServerMessage = parsed.message;
    switch (message.type) {
      case "welcome":
        return this.#onWelcome(message.heartbeatMs, message.resumed);
      case "assign":
        return this.#onAssign(message.episode);
      case "cancel":
        return this.#onCancel(message.episodeId, message.reason);
      case "error":
        if ((Object.values(SWARM_FATAL_ERRORS) as string[]).includes(message.code)) {
          this.#failFatally(new SwarmClientError(message.code, message.message));
          return;
        }
        this.#o.onEvent?.({ type: "error", code: message.code, message: message.message });
        return;
    }
  }

  #onWelcome(heartbeatMs: number, resumed: string[]): void {
    this.#live = true;
    this.#tries = 0;
    const held = new Set(resumed);
    for (const [id, r] of this.#running) {
      if (!r.result) continue;
      // A result the scheduler no longer holds was re-run elsewhere: sending it would be a duplicate.
      if (held.has(id)) this.#sendRaw(r.result);
      this.#running.delete(id);
    }
    this.#stopHeartbeat();
    this.#heartbeat = setInterval(() => this.#sendRaw({ type: "heartbeat", running: this.#activeIds() }), heartbeatMs);
    this.#heartbeat.unref();
    this.#o.onEvent?.({ type: "connected", resumed });
    this.#firstWelcome.resolve();
  }

  #activeIds(): string[] {
    const ids: string[] = [];
    for (const [id, r] of this.#running) if (!r.result) ids.push(id);
    return ids;
  }

  #onCancel(episodeId: string, reason: string): void {
    const r = this.#running.get(episodeId);
    this.#o.onEvent?.({ type: "cancel", episodeId, reason });
    if (!r) return;
    r.controller.abort();
    if (r.result) this.#running.delete(episodeId);
    r.result = { type: "abort", episodeId, reason: { kind: "client-lost", message: `cancelled: ${reason}` } };
  }

  #onAssign(assignment: Assignment): void {
    const controller = new AbortController();
    const env = this.#envs.get(`${assignment.env.name}@${assignment.env.version}`);
    const entry: Running = { assignment, env, active: true, controller, result: null, done: Promise.resolve() };
    this.#running.set(assignment.episodeId, entry);
    this.#o.onEvent?.({ type: "episode-start", assignment });
    entry.done = this.#runOne(entry);
  }

  async #runOne(entry: Running): Promise<void> {
    const { assignment, controller, env } = entry;
    const played = env
      ? await runEpisode({
          assignment,
          runtime: env.runtime,
          signal: controller.signal,
          workflow: () => this.#workflow(),
          agreeSync: () => this.#sendRaw({ type: "agree_sync" }),
        })
      : ({
          type: "abort",
          episodeId: assignment.episodeId,
          reason: { kind: "start-failed", message: `this client has no ${assignment.env.name}@${assignment.env.version}` },
        } satisfies ClientMessage);
    const ran = env && played.type === "end" && !controller.signal.aborted ? await this.#modelRewards.apply(assignment, env, played, controller.signal) : played;
    entry.active = false;
    const result: ClientMessage = env && ran.type === "end" ? { ...ran, code: { hash: env.hash, dev: env.dev ?? false } } : ran;
    if (controller.signal.aborted && this.#stopped) return;
    if (result.type === "end") this.#o.onEvent?.({ type: "episode-end", episodeId: result.episodeId, rewards: result.rewards, info: result.info ?? {} });
    else this.#o.onEvent?.({ type: "episode-abort", episodeId: result.episodeId, kind: result.reason.kind, message: result.reason.message });
    if (controller.signal.aborted) {
      this.#running.delete(assignment.episodeId);
      return;
    }
    entry.result = result;
    if (this.#live) {
      this.#sendRaw(result);
      this.#running.delete(assignment.episodeId);
    }
    const every = this.#o.agreeSyncEvery ?? 0;
    if (every > 0 && result.type === "end" && ++this.#endedSinceAgree >= every) {
      this.#endedSinceAgree = 0;
      this.#sendRaw({ type: "agree_sync" });
    }
  }

  async #workflow(): Promise<Workflow> {
    if (this.#o.loadWorkflow) return this.#o.loadWorkflow();
    return this.#o.workflow ?? this.#defaultLoop;
  }

  #sendRaw(message: ClientMessage): void {
    const s = this.#socket;
    if (s && s.readyState === WebSocket.OPEN) s.send(JSON.stringify(message));
  }

  #stopHeartbeat(): void {
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    this.#heartbeat = null;
  }
}

function indexEnvironments(environments: readonly ClientEnvironment[]): Map<string, ClientEnvironment> {
  return new Map(environments.map((e) => [`${e.runtime.manifest.name}@${e.runtime.manifest.version}`, e]));
}

/** Why the server answered the upgrade with a 4xx, as an error that says what to do. */
function refusal(url: string, status: number, body: string): SwarmClientError {
  let detail = "";
  try {
    const e = (JSON.parse(body) as { error?: { code?: unknown; message?: unknown } }).error;
    if (e && typeof e.message === "string") detail = ` (${typeof e.code === "string" ? `${e.code}: ` : ""}${e.message})`;
  } catch {
    detail = body.length > 0 ? ` (${body.slice(0, 200)})` : "";
  }
  if (status === 404) return new SwarmClientError(SWARM_CLIENT_ERRORS.noSwarm, `no ${SWARM_PATH} route at ${url}: is this an agentjet serve/train?`);
  if (status === 401) {
    return new SwarmClientError(SWARM_CLIENT_ERRORS.unauthorized, `the server refused the token${detail}: pass the client token with --token or AGENTJET_CLIENT_TOKEN (the server prints where its tokens are)`);
  }
  return new SwarmClientError(SWARM_CLIENT_ERRORS.refused, `the server refused the connection with HTTP ${status}${detail}`);
}

function toSwarmUrl(url: string): string {
  const u = new URL(url);
  if (u.protocol === "http:") u.protocol = "ws:";
  if (u.protocol === "https:") u.protocol = "wss:";
  if (u.pathname === "/" || u.pathname === "") u.pathname = SWARM_PATH;
  return u.toString();
}
