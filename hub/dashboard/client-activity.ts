import type { ParsedClientMessage, ServerMessage } from "../../sdk/swarm/protocol.ts";
import type { Hello } from "../scheduler/client-directory.ts";

/** One `/swarm` client as the dashboard shows it. */
export interface ClientView {
  clientId: string;
  connected: boolean;
  envs: Array<{ name: string; version: string; hash: string; dev: boolean }>;
  concurrency: number;
  /** Episodes assigned to it and not yet ended or aborted (a heartbeat's `running` list resets it). */
  inFlight: number;
  connectedAt: number;
  lastSeen: number;
  ended: number;
  failed: number;
}

interface Entry {
  view: Omit<ClientView, "inFlight">;
  running: Set<string>;
}

/** Departed clients kept listed at most; past it the one seen longest ago is forgotten. */
export const DEPARTED_CLIENTS_KEPT = 100;

/**
 * What each `/swarm` client is doing, from the messages the service's relay passes both ways: its hello
 * (environments, concurrency), assignments out, ends, aborts and heartbeats in. It outlives runs, as the
 * relay does; a departed client stays listed, disconnected, until it comes back, the latest
 * `departedKept` of them (a client restarted with a new random id is a new client: a long-running server
 * would otherwise list, and send in every live snapshot, every client it ever had).
 */
export class ClientActivity {
  readonly #clients = new Map<string, Entry>();
  readonly #now: () => number;
  readonly #departedKept: number;

  constructor(now: () => number = Date.now, departedKept = DEPARTED_CLIENTS_KEPT) {
    this.#now = now;
    this.#departedKept = departedKept;
  }

  connected(hello: Hello): void {
    const now = this.#now();
    const old = this.#clients.get(hello.clientId);
    const envs = hello.envs.map((e) => ({ name: e.name, version: e.version, hash: e.hash, dev: e.dev ?? false }));
    const view = { clientId: hello.clientId, connected: true, envs, concurrency: hello.concurrency, connectedAt: now, lastSeen: now, ended: old?.view.ended ?? 0, failed: old?.view.failed ?? 0 };
    this.#clients.set(hello.clientId, { view, running: new Set(hello.running) });
  }

  received(clientId: string, message: ParsedClientMessage): void {
    const entry = this.#clients.get(clientId);
    if (!entry) return;
    entry.view.lastSeen = this.#now();
    if (message.type === "heartbeat") entry.running = new Set(message.running);
    else if (message.type === "end") {
      if (entry.running.delete(message.episodeId)) entry.view.ended += 1;
    } else if (message.type === "abort") {
      if (entry.running.delete(message.episodeId)) entry.view.failed += 1;
    }
  }

  sent(clientId: string, message: ServerMessage): void {
    const entry = this.#clients.get(clientId);
    if (!entry) return;
    if (message.type === "assign") entry.running.add(message.episode.episodeId);
    else if (message.type === "cancel") entry.running.delete(message.episodeId);
  }

  disconnected(clientId: string): void {
    const entry = this.#clients.get(clientId);
    if (!entry) return;
    entry.view.connected = false;
    entry.running.clear();
    const departed = [...this.#clients.values()].filter((e) => !e.view.connected);
    if (departed.length <= this.#departedKept) return;
    departed.sort((a, b) => a.view.lastSeen - b.view.lastSeen);
    for (const e of departed.slice(0, departed.length - this.#departedKept)) this.#clients.delete(e.view.clientId);
  }

  list(): ClientView[] {
    return [...this.#clients.values()].map((e) => ({ ...e.view, envs: e.view.envs.map((x) => ({ ...x })), inFlight: e.running.size }));
  }
}
