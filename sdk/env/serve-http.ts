import { createServer } from "node:http";
import { createDispatcher } from "./create-dispatcher.ts";
import type { EnvironmentDefinition } from "./define-environment.ts";
import { readRequest } from "./read-request.ts";

/** Serves the environment protocol over HTTP (POST / with one request; the reply is the body), for docker plugins with `docker.port`. */
export function serveHttp(environment: EnvironmentDefinition, port: number): void {
  const dispatch = createDispatcher(environment);
  let queue = Promise.resolve();
  createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      queue = queue.then(async () => {
        const read = readRequest(Buffer.concat(chunks).toString("utf8"));
        const reply = read.kind === "ok" ? await dispatch(read.request) : read.reply;
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reply));
      });
    });
  }).listen(port, "0.0.0.0");
}
