import { type ClientEnvironment, type ClientEvent, SwarmClient, type Workflow } from "../../sdk/swarm/index.ts";

/** `agentjet train`'s in-process clients: N swarm clients on one set of open environments. */
export async function startLocalClients(options: {
  /** The swarm server's address, e.g. `http://127.0.0.1:8700`. */
  url: string;
  /** A client token of that server (`agentjet train` passes the one it resolved). */
  token?: string | null | undefined;
  count: number;
  environments: readonly ClientEnvironment[];
  concurrency: number;
  workflow?: Workflow;
  /** Each client sends `agree_sync` after every N rewarded episodes (any-client / all-clients); 0 never. */
  agreeSyncEvery?: number;
  onEvent?: (clientId: string, event: ClientEvent) => void;
}): Promise<{ clients: SwarmClient[]; stop: () => Promise<void> }> {
  const clients = Array.from({ length: options.count }, (_, i) => {
    const clientId = `local-${i}`;
    return new SwarmClient({
      url: options.url,
      ...(options.token ? { token: options.token } : {}),
      clientId,
      environments: options.environments,
      concurrency: options.concurrency,
      ...(options.workflow ? { workflow: options.workflow } : {}),
      ...(options.agreeSyncEvery ? { agreeSyncEvery: options.agreeSyncEvery } : {}),
      ...(options.onEvent ? { onEvent: (e: ClientEvent) => options.onEvent!(clientId, e) } : {}),
    });
  });
  await Promise.all(clients.map((c) => c.start()));
  return { clients, stop: async () => void (await Promise.all(clients.map((c) => c.stop()))) };
}
