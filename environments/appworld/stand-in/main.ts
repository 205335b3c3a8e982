import { join } from "node:path";
import { serveStandIn } from "./server.ts";

/** `node stand-in-server.mjs --port 8000`: the stand-in's process, serving `$APPWORLD_ROOT/data`. */
const args = process.argv.slice(2);
const at = args.indexOf("--port");
const port = at >= 0 ? Number(args[at + 1]) : 8000;
const root = process.env["APPWORLD_ROOT"] ?? process.cwd();
await serveStandIn({ dataDir: join(root, "data"), port });
console.error(`AppWorld stand-in (test double) listening on 127.0.0.1:${port}, data ${join(root, "data")}`);
