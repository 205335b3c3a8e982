import websocket from "@fastify/websocket";
import type { FastifyInstance } from "fastify";
import type { WebSocket } from "ws";
import {
  ClientMessageSchema,
  type ParsedClientMessage,
  parseFrame,
  type ServerMessage,
  SWARM_PATH,
  SWARM_PROTOCOL_VERSION,
} from "../../sdk/swarm/protocol.ts";
import type { ClientLink, Scheduler } from "../scheduler/scheduler.ts";
import { SWARM_ERRORS } from "./errors.ts";

/** Who takes the connections: a `Scheduler`, or the service's relay that outlives runs. */
export type SwarmHandler = Pick<Scheduler, "connect" | "handle" | "disconnect" | "timing">;

export interface SwarmPluginOptions {
  scheduler: SwarmHandler;
  /** The WebSocket route (default `/swarm`). */
  path?: string;
  /** Largest frame accepted, bytes (default 1 MiB). */
  maxPayload?: number;
}

/** Who holds a client id: the token that said hello with it, and whether that socket is gone (since when). */
interface Owner {
  tokenId: string;
  sockets: number;
  releasedAt: number;
}

/**
 * The server side of the client connection: a fastify plugin with one WebSocket route. The upgrade
 * needs a client token (the server's auth hook checks it; the route declares `auth: "client"`). It
 * validates every frame, requires `hello` first, and hands messages to the scheduler. A client id
 * belongs to the token that first said hello with it, until its socket has been gone for a lease:
 * another token cannot take it over (and so cannot close the holder's socket or inherit its
 * episodes). Register it on the swarm server's app: `await app.register(swarmPlugin, { scheduler })`.
 * It is not encapsulated (like a fastify-plugin), so `app.websocketServer` is visible to the app it
 * is registered on.
 */
export async function swarmPlugin(app: FastifyInstance, options: SwarmPluginOptions): Promise<void> {
  const { scheduler } = options;
  if (!app.hasDecorator("websocketServer")) {
    await app.register(websocket, { options: { maxPayload: options.maxPayload ?? 1024 * 1024 } });
  }
  const sockets = new Set<WebSocket>();
  const owners = new Map<string, Owner>();
  const graceMs = (): number => scheduler.timing().leaseMs;
  const pruneOwners = (now: number): void => {
    for (const [id, o] of owners) if (o.sockets === 0 && now - o.releasedAt > graceMs()) owners.delete(id);
  };
  app.addHook("onClose", async () => {
    for (const s of sockets) s.close(1001, "server closing");
  });
  app.get(options.path ?? SWARM_PATH, { websocket: true, config: { auth: "client" } }, (socket, request) => {
    sockets.add(socket);
    // Apps without the auth hook (test doubles) have no caller: every such socket is one anonymous holder.
    const tokenId = request.agentjetCaller?.tokenId ?? "anonymous";
    // The admin token may take over any client id: it can do everything a client can.
    const isAdmin = request.agentjetCaller?.role === "admin";
    let clientId: string | null = null;
    const link: ClientLink = {
      send: (message: ServerMessage) => {
        if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
      },
      close: () => socket.terminate(),
    };
    const fail = (code: string, message: string) => {
      link.send({ type: "error", code, message });
      socket.close(1008, code);
    };
    const release = (): void => {
      const owner = clientId === null ? undefined : owners.get(clientId);
      if (!owner) return;
      owner.sockets -= 1;
      if (owner.sockets === 0) owner.releasedAt = Date.now();
    };
    /** Binds this socket to `id`, or says why it cannot have it. */
    const claimId = (id: string): boolean => {
      if (id === clientId) return true;
      const now = Date.now();
      pruneOwners(now);
      const owner = owners.get(id);
      if (owner && owner.tokenId !== tokenId && !isAdmin) {
        fail(SWARM_ERRORS.clientIdTaken, `client id '${id}' belongs to a client with another token; choose another --client-id`);
        return false;
      }
      release();
      clientId = id;
      if (owner) {
        owner.sockets += 1;
        owner.tokenId = tokenId;
      } else owners.set(id, { tokenId, sockets: 1, releasedAt: now });
      return true;
    };
    socket.on("message", (data, isBinary) => {
      if (isBinary) return fail(SWARM_ERRORS.badFrame, "frames are JSON text");
      const text = data.toString();
      const parsed = parseFrame(ClientMessageSchema, text);
      if (!parsed.ok) {
        const version = helloProtocol(text);
        if (version !== null && version !== SWARM_PROTOCOL_VERSION) {
          return fail(SWARM_ERRORS.protocolVersion, `this server speaks swarm protocol ${SWARM_PROTOCOL_VERSION}; the client sent ${JSON.stringify(version)} (upgrade the older side)`);
        }
        return fail(SWARM_ERRORS.badFrame, parsed.error);
      }
      const message: ParsedClientMessage = parsed.message;
      if (message.type === "hello") {
        if (!claimId(message.clientId)) return;
        scheduler.connect(message, link);
        return;
      }
      if (clientId === null) return fail(SWARM_ERRORS.helloFirst, "the first frame must be hello");
      scheduler.handle(clientId, message);
    });
    socket.on("close", () => {
      sockets.delete(socket);
      release();
      if (clientId !== null) scheduler.disconnect(clientId, link);
    });
    socket.on("error", () => socket.terminate());
  });
}

/** `hello.protocol` of a frame that is a hello, else null: a version mismatch gets its own code, not "bad frame". */
function helloProtocol(text: string): unknown {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  if (json === null || typeof json !== "object" || (json as { type?: unknown }).type !== "hello") return null;
  return (json as { protocol?: unknown }).protocol ?? null;
}

// What fastify-plugin sets: register into the caller's scope instead of a child one.
Object.assign(swarmPlugin, { [Symbol.for("skip-override")]: true, [Symbol.for("fastify.display-name")]: "agentjet-swarm" });
