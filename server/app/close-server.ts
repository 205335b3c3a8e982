import type { FastifyInstance } from "fastify";

/**
 * Stops a server: no new connections, in-flight requests get `graceMs` to finish, then every socket left
 * is cut. Fastify's `close()` alone closes only the keep-alive connections idle at that moment; one that
 * was answering a request then idles until the 72 s keep-alive timeout and holds the close that long.
 */
export async function closeServer(app: FastifyInstance, graceMs = 1000): Promise<void> {
  const cut = setTimeout(() => app.server.closeAllConnections(), graceMs);
  try {
    await app.close();
  } finally {
    clearTimeout(cut);
  }
}
