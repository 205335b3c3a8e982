/** `agentjet/sdk/env/serve`: the protocol servers a docker plugin's entry calls (Node only). */
export { serveStdio } from "./serve-stdio.ts";
export { serveHttp } from "./serve-http.ts";
