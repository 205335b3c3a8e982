import { createInterface } from "node:readline";
import { createDispatcher } from "./create-dispatcher.ts";
import type { EnvironmentDefinition } from "./define-environment.ts";
import { HostRequestSchema } from "./protocol.ts";

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
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      return { id: -1, ok: false as const, error: { message: "request is not JSON" } };
    }
    const parsed = HostRequestSchema.safeParse(raw);
    if (!parsed.success) {
      const id = typeof (raw as { id?: unknown })?.id === "number" ? (raw as { id: number }).id : -1;
      return { id, ok: false as const, error: { message: `invalid request: ${parsed.error.message}` } };
    }
    return dispatch(parsed.data);
  }
}
