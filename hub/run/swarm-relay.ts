import type { ParsedClientMessage } from "../../sdk/swarm/protocol.ts";
import type { ClientActivity } from "../dashboard/client-activity.ts";
import type { ClientLink, Hello } from "../scheduler/client-directory.ts";
import type { Scheduler } from "../scheduler/index.ts";
import type { TrainingCoordinator } from "../../server/training/index.ts";

interface Connection {
  hello: Hello;
  link: ClientLink;
}

interface Attachment {
  scheduler: Scheduler;
  coordinator: TrainingCoordinator;
  /** The links handed to this run's scheduler: closing them ends the socket only while attached. */
  links: Map<ClientLink, ClientLink>;
  live: boolean;
}

/**
 * The service's side of `/swarm`: clients stay connected while the engine is offline or restarting.
 * It remembers each client's hello and hands the connection to the running scheduler (again after a
 * restart), and tells the coordinator of every sign of life; the scheduler's own events carry
 * `agree_sync` and departures (see `assemble-run.ts`).
 */
export class SwarmRelay {
  readonly #connections = new Map<string, Connection>();
  #run: Attachment | null = null;
  /** Sees every client's messages both ways (the dashboard's client list). */
  readonly activity: ClientActivity;

  constructor(activity: ClientActivity) {
    this.activity = activity;
  }

  /** Connects the running scheduler; clients already connected say hello to it. Returns the detach function. */
  attach(scheduler: Scheduler, coordinator: TrainingCoordinator): () => void {
    const run: Attachment = { scheduler, coordinator, links: new Map(), live: true };
    this.#run = run;
    for (const c of this.#connections.values()) scheduler.connect({ ...c.hello, running: [] }, this.#linkFor(run, c.hello.clientId, c.link));
    return () => {
      run.live = false;
      if (this.#run === run) this.#run = null;
    };
  }

  connect(hello: Hello, link: ClientLink): void {
    const old = this.#connections.get(hello.clientId);
    this.#connections.set(hello.clientId, { hello, link });
    this.activity.connected(hello);
    const run = this.#run;
    if (!run) {
      if (old && old.link !== link) old.link.close();
      return;
    }
    run.coordinator.touchClient(hello.clientId);
    run.scheduler.connect(hello, this.#linkFor(run, hello.clientId, link));
  }

  handle(clientId: string, message: ParsedClientMessage): void {
    this.activity.received(clientId, message);
    const run = this.#run;
    if (!run) return;
    run.coordinator.touchClient(clientId);
    run.scheduler.handle(clientId, message);
  }

  disconnect(clientId: string, link: ClientLink): void {
    if (this.#connections.get(clientId)?.link === link) {
      this.#connections.delete(clientId);
      this.activity.disconnected(clientId);
    }
    const run = this.#run;
    const mine = run?.links.get(link);
    if (run && mine) {
      run.links.delete(link);
      run.scheduler.disconnect(clientId, mine);
    }
  }

  /** The running scheduler's heartbeat and lease; while offline, the defaults (clients wait connected). */
  timing(): { heartbeatMs: number; leaseMs: number } {
    return this.#run?.scheduler.timing() ?? { heartbeatMs: 10_000, leaseMs: 30_000 };
  }

  /** Connected clients (whether or not a run is attached). */
  clients(): string[] {
    return [...this.#connections.keys()];
  }

  #linkFor(run: Attachment, clientId: string, link: ClientLink): ClientLink {
    let mine = run.links.get(link);
    if (!mine) {
      mine = {
        send: (m) => {
          if (!run.live) return;
          this.activity.sent(clientId, m);
          link.send(m);
        },
        close: () => {
          if (run.live) link.close();
        },
      };
      run.links.set(link, mine);
    }
    return mine;
  }
}
