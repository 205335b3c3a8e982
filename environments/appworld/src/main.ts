import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { serveStdio } from "../../../sdk/env/serve-stdio.ts";
import { createAppWorldClient } from "./appworld-client.ts";
import { checkDataDir, readAdapterConfig } from "./config.ts";
import { createAppWorldEnvironment } from "./environment.ts";
import { startAppWorldServer } from "./start-server.ts";

/**
 * The container's entry: check the mounted data, start AppWorld's environment server on loopback, wait
 * until it answers, then speak agentjet's environment protocol on stdio. If the server dies, so does the
 * container: the episode in flight fails as a crash and the supervisor replaces the instance.
 */
const config = readAdapterConfig(process.env);
const dataDir = join(config.root, "data");
try {
  checkDataDir(dataDir);
  if (config.scratch) mkdirSync(config.scratch, { recursive: true });
  const client = createAppWorldClient({ baseUrl: `http://127.0.0.1:${config.port}` });
  const server = await startAppWorldServer({ command: config.command, port: config.port, cwd: config.root, client, timeoutMs: config.startTimeoutMs });
  server.on("exit", (code, signal) => {
    console.error(`the AppWorld environment server exited (${signal ?? `code ${code}`})`);
    process.exit(1);
  });
  serveStdio(createAppWorldEnvironment({ client, dataDir }));
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
