import { createInterface } from "node:readline";
import { createDispatcher } from "./create-dispatcher.ts";
import type { EnvironmentDefinition } from "./define-environment.ts";
import { readRequest } from "./read-request.ts";

/**
 * Serves the environment protocol over stdin/stdout, one JSON object per line: the entry of a docker
 * plugin calls this. Stdout belongs to the protocol, so console output is moved to stderr.
 */
export function serveStdio(environment: EnvironmentDefinition): void {
  const out = process.stdout;
  for (const level of ["log", "info", "debug"] as const) console[level] = console.error;
  const dispatch = createDispatcher(environment);
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  // One request in flight per instance: replies go out in order.
  let queue = Promise.resolve();
  lines.on("line", (line) => {
    queue = queue.then(async () => {
      const reply = await handleLine(line);
      out.write(`${JSON.stringify(reply)}\n`);
    });
  });
  lines.on("close", () => {
    void queue.then(() => process.exit(0));
  });

  async function handleLine(line: string) {
    const read = readRequest(line);
    return read.kind === "ok" ? dispatch(read.request) : read.reply;
  }
}
