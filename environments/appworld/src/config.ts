import { existsSync } from "node:fs";
import { join } from "node:path";
import { AppWorldDataError } from "./errors.ts";

/** The adapter's settings inside the container, from its environment variables (the Dockerfiles set them). */
export interface AdapterConfig {
  /** APPWORLD_ROOT (default /appworld): the data is mounted at `<root>/data`, outputs go to `<root>/experiments`. */
  root: string;
  /** AGENTJET_APPWORLD_SERVER_CMD, split on spaces (default `appworld serve environment`); `--port` is appended. */
  command: string[];
  /** AGENTJET_APPWORLD_PORT (default 8000), on the container's loopback. */
  port: number;
  /** AGENTJET_APPWORLD_START_TIMEOUT_S (default 280): how long to poll for the server. */
  startTimeoutMs: number;
  /** AGENTJET_APPWORLD_SCRATCH: a folder made at start-up (the real image links `<root>/experiments` into the /tmp tmpfs). */
  scratch?: string;
}

export function readAdapterConfig(env: NodeJS.ProcessEnv): AdapterConfig {
  return {
    root: env["APPWORLD_ROOT"] ?? "/appworld",
    command: (env["AGENTJET_APPWORLD_SERVER_CMD"] ?? "appworld serve environment").split(/\s+/).filter(Boolean),
    port: Number(env["AGENTJET_APPWORLD_PORT"] ?? 8000),
    startTimeoutMs: Number(env["AGENTJET_APPWORLD_START_TIMEOUT_S"] ?? 280) * 1000,
    ...(env["AGENTJET_APPWORLD_SCRATCH"] ? { scratch: env["AGENTJET_APPWORLD_SCRATCH"] } : {}),
  };
}

/** Where to get the data, said in the commands to run. */
export const DATA_HELP =
  "Download AppWorld's data on the host (pip install appworld && appworld install && appworld download data --root <dir>), " +
  "then install with: agentjet env add appworld --data <dir>/data --mount data=<dir>/data";

/** Checks the mounted data folder before the server starts, so a missing mount says what to run. */
export function checkDataDir(dataDir: string): void {
  if (!existsSync(join(dataDir, "datasets")) || !existsSync(join(dataDir, "tasks"))) {
    throw new AppWorldDataError(`no AppWorld data at ${dataDir} (expected datasets/ and tasks/ there). ${DATA_HELP}`);
  }
}
