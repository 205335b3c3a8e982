export { swarmPlugin, type SwarmPluginOptions } from "./plugin.ts";
export { startLocalClients } from "./local-clients.ts";
export { hashPluginDir } from "./hash-plugin-dir.ts";
export { SWARM_ERRORS } from "./errors.ts";
