import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { openEnvironment } from "../../plugins/index.ts";
import type { Manifest } from "../../sdk/env/index.ts";
import { ManifestSchema } from "../../sdk/env/schemas.ts";
import type { ClientEnvironment } from "../../sdk/swarm/index.ts";
import { listInstalled, resolveInstalled } from "../store/index.ts";
import { hashPluginDir } from "./hash-plugin-dir.ts";

const MANIFEST = "agentjet.env.json";

/**
 * An environment a client can open: a local plugin folder (hashed from its files, announced as a
 * development version) or an installed one (the lockfile's hash).
 */
export interface ClientEnvSource {
  name: string;
  dir: string;
  manifest: Manifest;
  /** Local plugins are development versions: watched with `--watch` and re-hashed when edited. */
  local: boolean;
  open(): Promise<ClientEnvironment>;
}

/** Local plugin folders under `paths` (each a plugin, or a folder of plugins), by name. */
export function findLocalPlugins(paths: readonly string[]): Map<string, { dir: string; manifest: Manifest }> {
  const out = new Map<string, { dir: string; manifest: Manifest }>();
  const add = (dir: string) => {
    const manifest = ManifestSchema.parse(JSON.parse(readFileSync(join(dir, MANIFEST), "utf8")));
    out.set(manifest.name, { dir, manifest });
  };
  for (const p of paths.map((x) => resolve(x))) {
    if (existsSync(join(p, MANIFEST))) add(p);
    else if (existsSync(p)) for (const e of readdirSync(p, { withFileTypes: true })) if (e.isDirectory() && existsSync(join(p, e.name, MANIFEST))) add(join(p, e.name));
  }
  return out;
}

/**
 * The sources for `names` (all local plugins plus all installed ones when empty): a local plugin folder
 * wins over the project's installed environment of the same name. Names found nowhere are returned apart.
 */
export function resolveClientEnvs(
  names: readonly string[],
  options: { envPaths: readonly string[]; projectDir: string; maxInstances: number; episodesPerInstance?: number },
): { sources: ClientEnvSource[]; missing: string[] } {
  const local = findLocalPlugins(options.envPaths);
  const wanted = names.length > 0 ? names : [...new Set([...local.keys(), ...listInstalled({ projectDir: options.projectDir }).map((e) => e.name)])];
  const sources: ClientEnvSource[] = [];
  const missing: string[] = [];
  for (const name of wanted) {
    const l = local.get(name);
    if (l) {
      sources.push({
        name,
        dir: l.dir,
        manifest: l.manifest,
        local: true,
        open: async () => {
          // Hashed before it is built: an edit during the build changes the hash again and triggers another reload.
          const hash = await hashPluginDir(l.dir);
          const manifest = ManifestSchema.parse(JSON.parse(readFileSync(join(l.dir, MANIFEST), "utf8")));
          const runtime = await openEnvironment({ dir: l.dir, manifest, maxInstances: options.maxInstances, episodesPerInstance: options.episodesPerInstance ?? 1 });
          return { runtime, hash, dev: true, dir: l.dir };
        },
      });
      continue;
    }
    const installed = resolveInstalled(name, undefined, { projectDir: options.projectDir });
    if (!installed) {
      missing.push(name);
      continue;
    }
    sources.push({
      name,
      dir: installed.dir,
      manifest: installed.manifest,
      local: false,
      open: async () => ({
        runtime: await openEnvironment({
          dir: installed.dir,
          manifest: installed.manifest,
          dataDir: installed.dataDir,
          maxInstances: options.maxInstances,
          episodesPerInstance: options.episodesPerInstance ?? 1,
          ...(installed.bundlePath ? { bundlePath: installed.bundlePath } : {}),
          ...(installed.image ? { image: installed.image } : {}),
          ...(installed.mounts ? { mounts: installed.mounts } : {}),
        }),
        hash: installed.sha256,
        dir: installed.dir,
      }),
    });
  }
  return { sources, missing };
}
