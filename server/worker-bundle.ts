import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build, type BuildOptions, buildSync, type Plugin } from "esbuild";

/**
 * Worker threads start without the parent's TypeScript loader (tsx, vitest), so a server worker is
 * bundled once with esbuild to a plain module in the temp folder: `agentjet-<name>-<hash>.mjs`, keyed by
 * the sources' contents and `extra` (e.g. a package's path), written under a temporary name first so that
 * another process never loads it half-written.
 */
export interface WorkerBundle {
  name: string;
  /** The entry first, then every source it bundles (their contents key the cached file). */
  sources: readonly string[];
  /** Also keys the cached file (e.g. the path of a package the plugins import by path). */
  extra?: string;
  plugins?: Plugin[];
}

function bundledPath(w: WorkerBundle): string {
  const hash = createHash("sha256");
  for (const f of w.sources) hash.update(readFileSync(f));
  return join(tmpdir(), `agentjet-${w.name}-${hash.update(w.extra ?? "").digest("hex").slice(0, 16)}.mjs`);
}

function buildOptions(w: WorkerBundle): BuildOptions & { write: false } {
  return { bundle: true, platform: "node", format: "esm", target: "node20", write: false, logLevel: "silent", entryPoints: [w.sources[0]!], plugins: w.plugins ?? [] };
}

function writeBundle(out: string, text: string): string {
  const tmp = `${out}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, out);
  return out;
}

/** The worker's bundle, built off the event loop when it is not cached yet. */
export async function bundleWorker(w: WorkerBundle): Promise<string> {
  const out = bundledPath(w);
  if (existsSync(out)) return out;
  return writeBundle(out, (await build(buildOptions(w))).outputFiles[0]!.text);
}

/** The worker's bundle, built in place when it is not cached yet (for a caller that cannot wait). */
export function bundleWorkerSync(w: WorkerBundle): string {
  const out = bundledPath(w);
  if (existsSync(out)) return out;
  return writeBundle(out, buildSync(buildOptions(w)).outputFiles[0]!.text);
}
