import type { ServerMessage } from "../../sdk/swarm/index.ts";

/** How the scheduler talks to one connected client (the swarm plugin gives one per socket). */
export interface ClientLink {
  send(message: ServerMessage): void;
  close(): void;
}
