import { createServer } from "node:http";
import { createDispatcher } from "./create-dispatcher.ts";
import type { EnvironmentDefinition } from "./define-environment.ts";
import { HostRequestSchema } from "./protocol.ts";

/** Serves the environment protocol over HTTP (POST / with one request; the reply is the body), for docker plugins with `docker.port`. */
export function serveHttp(environment: EnvironmentDefinition, port: number): void {
  const dispatch = createDispatcher(environment);
  let queue = Promise.resolve();
  createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      queue = queue.then(async () => {
        let raw: unknown;
        try {
          raw = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch {
          raw = undefined;
        }
        const parsed = HostRequestSchema.safeParse(raw);
        const reply = parsed.success
          ? await dispatch(parsed.data)
          : { id: -1, ok: false as const, error: { message: "invalid request" } };
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reply));
      });
    });
  }).listen(port, "0.0.0.0");
}
