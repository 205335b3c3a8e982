import type { ServerMessage } from "../../sdk/swarm/protocol.ts";

/** How the scheduler talks to one connected client (the swarm plugin gives one per socket). */
export interface ClientLink {
  send(message: ServerMessage): void;
  close(): void;
}
