import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Manifest, PrepareFunction } from "../../sdk/env/index.ts";
import { PrepareFailedError } from "./errors.ts";

/**
 * Runs the plugin's host-side `prepare` hook, which writes its dataset files into the installed folder
 * (the folder the manifest's `{ file }` splits resolve against). `cacheKey` keeps a re-install in the
 * same process from reusing an older module of the same path.
 */
export async function runPrepare(opts: {
  dir: string;
  manifest: Manifest;
  options: Record<string, string>;
  online: boolean;
  cacheKey: string;
  log: (line: string) => void;
}): Promise<boolean> {
  const { manifest } = opts;
  if (!manifest.prepare) return false;
  const url = `${pathToFileURL(join(opts.dir, manifest.prepare)).href}?v=${opts.cacheKey}`;
  let prepare: PrepareFunction | undefined;
  try {
    const mod = (await import(url)) as { prepare?: PrepareFunction; default?: { prepare?: PrepareFunction } };
    prepare = mod.prepare ?? mod.default?.prepare;
  } catch (cause) {
    throw new PrepareFailedError(`cannot load ${manifest.name}'s prepare hook ${manifest.prepare}: ${(cause as Error).message}`, cause);
  }
  if (typeof prepare !== "function") throw new PrepareFailedError(`${manifest.prepare} does not export prepare(ctx)`);
  try {
    await prepare({ pluginDir: opts.dir, outDir: opts.dir, options: { ...opts.options }, online: opts.online, log: opts.log });
  } catch (cause) {
    throw new PrepareFailedError(`${manifest.name}'s prepare hook failed: ${(cause as Error).message}`, cause);
  }
  return true;
}
