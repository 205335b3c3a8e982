import { createHash } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Worker threads start without the parent's TypeScript loader (tsx, vitest), so a server worker is
 * bundled once with esbuild to a plain module in the temp folder. These are the parts every such bundle
 * shares: its esbuild options, its cached path, its atomic write.
 */
export const WORKER_BUILD = { bundle: true, platform: "node", format: "esm", target: "node20", write: false, logLevel: "silent" } as const;

/** `agentjet-<name>-<hash>.mjs` in the temp folder, keyed by the sources' contents and `extra` (e.g. a package's path). */
export function bundledWorkerPath(name: string, sources: readonly string[], extra = ""): string {
  const hash = createHash("sha256");
  for (const f of sources) hash.update(readFileSync(f));
  return join(tmpdir(), `agentjet-${name}-${hash.update(extra).digest("hex").slice(0, 16)}.mjs`);
}

/** Writes a bundle under a temporary name first, so that another process never loads it half-written. */
export function writeBundle(out: string, text: string): void {
  const tmp = `${out}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, out);
}
