import type { ParsedClientMessage } from "../../sdk/swarm/protocol.ts";
import type { ClientLink } from "./client-link.ts";
import { offersEnvironment } from "./match-environments.ts";
import type { ClientState, EnvLane } from "./slots.ts";

export type { ClientLink } from "./client-link.ts";

export type Hello = Extract<ParsedClientMessage, { type: "hello" }>;

/**
 * The connected clients, which environment lanes each can serve, and their leases: a client silent (or
 * disconnected) past the lease is dropped, and whoever called `expire` fails its episodes.
 */
export class ClientDirectory {
  readonly #clients = new Map<string, ClientState>();
  readonly #lanes: readonly EnvLane[];

  constructor(lanes: readonly EnvLane[]) {
    this.#lanes = lanes;
  }

  get(clientId: string): ClientState | undefined {
    return this.#clients.get(clientId);
  }

  /** Adds or re-attaches a client (closing an older socket of the same id) and binds it to the lanes it announced. */
  connect(hello: Hello, link: ClientLink, now: number): { client: ClientState; isReconnect: boolean } {
    let client = this.#clients.get(hello.clientId);
    const isReconnect = client !== undefined;
    if (client?.link && client.link !== link) client.link.close();
    if (!client) {
      client = { id: hello.clientId, link, envs: [], concurrency: hello.concurrency, slots: new Set(), lastSeen: now, disconnectedAt: null };
      this.#clients.set(client.id, client);
    }
    for (const e of client.envs) e.clients.delete(client);
    client.link = link;
    client.concurrency = hello.concurrency;
    client.lastSeen = now;
    client.disconnectedAt = null;
    client.envs = this.#lanes.filter((e) => offersEnvironment(e.config, hello.envs));
    for (const e of client.envs) e.clients.add(client);
    return { client, isReconnect };
  }

  /** The socket closed; a stale link (already replaced by a reconnect) is ignored. */
  disconnect(clientId: string, link: ClientLink, now: number): ClientState | null {
    const client = this.#clients.get(clientId);
    if (!client || client.link !== link) return null;
    client.link = null;
    client.disconnectedAt = now;
    return client;
  }

  /** A message arrived: the lease starts over. */
  seen(client: ClientState, now: number): void {
    client.lastSeen = now;
  }

  /** Drops the clients whose lease ran out and returns them with how long they were silent. */
  expire(now: number, leaseMs: number): Array<{ client: ClientState; silentFor: number }> {
    const out: Array<{ client: ClientState; silentFor: number }> = [];
    for (const client of [...this.#clients.values()]) {
      const silentFor = client.link ? now - client.lastSeen : now - (client.disconnectedAt ?? now);
      if (silentFor <= leaseMs) continue;
      this.remove(client);
      out.push({ client, silentFor });
    }
    return out;
  }

  /** Forgets a client: its socket is closed and it serves no lane. */
  remove(client: ClientState): void {
    client.link?.close();
    client.link = null;
    for (const e of client.envs) e.clients.delete(client);
    this.#clients.delete(client.id);
  }

  hasFreeClient(lane: EnvLane): boolean {
    for (const c of lane.clients) if (c.link && c.slots.size < c.concurrency) return true;
    return false;
  }

  /** The connected client of the lane with the most free capacity. */
  pickClient(lane: EnvLane): ClientState | null {
    let best: ClientState | null = null;
    let bestFree = 0;
    for (const c of lane.clients) {
      if (!c.link) continue;
      const free = c.concurrency - c.slots.size;
      if (free > bestFree) {
        best = c;
        bestFree = free;
      }
    }
    return best;
  }

  count(): { clients: number; connected: number } {
    let connected = 0;
    for (const c of this.#clients.values()) if (c.link) connected += 1;
    return { clients: this.#clients.size, connected };
  }

  closeAll(): void {
    for (const c of this.#clients.values()) c.link?.close();
    this.#clients.clear();
  }
}
