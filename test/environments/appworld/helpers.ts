import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { serveStandIn } from "../../../environments/appworld/stand-in/server.ts";

/** The tiny synthetic data folder shaped like AppWorld's `data/` (for the stand-in test double). */
export const FIXTURE_DATA = fileURLToPath(new URL("./fixtures/appworld-data", import.meta.url));

/** Starts the stand-in server on a free loopback port. */
export async function startStandIn(): Promise<{ server: Server; baseUrl: string }> {
  const server = await serveStandIn({ dataDir: FIXTURE_DATA, port: 0 });
  return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

export function codeBlock(code: string): string {
  return `Let me do that.\n\`\`\`python\n${code}\n\`\`\``;
}
