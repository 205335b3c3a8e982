import websocket from "@fastify/websocket";
import type { FastifyInstance } from "fastify";
import type { WebSocket } from "ws";
import {
  ClientMessageSchema,
  type ParsedClientMessage,
  parseFrame,
  SWARM_PATH,
  type ServerMessage,
} from "../../sdk/swarm/protocol.ts";
import type { ClientLink, Scheduler } from "../scheduler/scheduler.ts";
import { SWARM_ERRORS } from "./errors.ts";

export interface SwarmPluginOptions {
  scheduler: Scheduler;
  /** The WebSocket route (default `/swarm`). */
  path?: string;
  /** Largest frame accepted, bytes (default 1 MiB). */
  maxPayload?: number;
}

/**
 * The server side of the client connection: a fastify plugin with one WebSocket route. It validates
 * every frame, requires `hello` first, and hands messages to the scheduler. Register it on the swarm
 * server's app: `await app.register(swarmPlugin, { scheduler })`. It is not encapsulated (like a
 * fastify-plugin), so `app.websocketServer` is visible to the app it is registered on.
 */
export async function swarmPlugin(app: FastifyInstance, options: SwarmPluginOptions): Promise<void> {
  const { scheduler } = options;
  if (!app.hasDecorator("websocketServer")) {
    await app.register(websocket, { options: { maxPayload: options.maxPayload ?? 1024 * 1024 } });
  }
  const sockets = new Set<WebSocket>();
  app.addHook("onClose", async () => {
    for (const s of sockets) s.close(1001, "server closing");
  });
  app.get(options.path ?? SWARM_PATH, { websocket: true }, (socket) => {
    sockets.add(socket);
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
    socket.on("message", (data, isBinary) => {
      if (isBinary) return fail(SWARM_ERRORS.badFrame, "frames are JSON text");
      const parsed = parseFrame(ClientMessageSchema, data.toString());
      if (!parsed.ok) return fail(SWARM_ERRORS.badFrame, parsed.error);
      const message: ParsedClientMessage = parsed.message;
      if (message.type === "hello") {
        clientId = message.clientId;
        scheduler.connect(message, link);
        return;
      }
      if (clientId === null) return fail(SWARM_ERRORS.helloFirst, "the first frame must be hello");
      scheduler.handle(clientId, message);
    });
    socket.on("close", () => {
      sockets.delete(socket);
      if (clientId !== null) scheduler.disconnect(clientId, link);
    });
    socket.on("error", () => socket.terminate());
  });
}

// What fastify-plugin sets: register into the caller's scope instead of a child one.
Object.assign(swarmPlugin, { [Symbol.for("skip-override")]: true, [Symbol.for("fastify.display-name")]: "agentjet-swarm" });
