import { existsSync, readdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Manifest } from "../../sdk/env/index.ts";
import { readLockfile, writeLockfile } from "./lockfile.ts";
import { BUNDLE_FILE, envDir, envsRoot, INSTALL_FILE } from "./paths.ts";
import { readManifest } from "./read-manifest.ts";

/** An installed environment, in the shape `openEnvironment` takes (plus where it came from). */
export interface InstalledEnvironment {
  name: string;
  version: string;
  sha256: string;
  kind: "vm" | "docker";
  /** The installed plugin folder. */
  dir: string;
  manifest: Manifest;
  /** vm: the bundle made at install time. */
  bundlePath?: string;
  /** docker: the image tag (built from the content hash, or the one given with --image). */
  image?: string;
  /** docker: `image` is the user's own (`--image`), not one the store built. */
  imageProvided?: boolean;
  /** docker: host folders for the manifest's named mounts. */
  mounts?: Record<string, string>;
  /** Where the prepare hook wrote the dataset files; the manifest's `{ file }` splits resolve against it. */
  dataDir: string;
  /** The prepare options it was installed with. */
  options: Record<string, string>;
}

export interface StoreOptions {
  /** The project whose store and lockfile are used (default: the working directory). */
  projectDir?: string;
}

/** The installed environment the lockfile pins (checked against `version` when given), or undefined. */
export function resolveInstalled(name: string, version?: string, opts: StoreOptions = {}): InstalledEnvironment | undefined {
  const projectDir = resolve(opts.projectDir ?? process.cwd());
  const entry = readLockfile(projectDir).environments[name];
  if (!entry || (version && entry.version !== version)) return undefined;
  const dir = envDir(projectDir, name, entry.version);
  if (!existsSync(join(dir, INSTALL_FILE))) return undefined;
  const manifest = readManifest(dir);
  return {
    name,
    version: entry.version,
    sha256: entry.sha256,
    kind: entry.kind,
    dir,
    manifest,
    ...(entry.kind === "vm" ? { bundlePath: join(dir, BUNDLE_FILE) } : {}),
    ...(entry.image ? { image: entry.image } : {}),
    ...(entry.image && entry.imageProvided ? { imageProvided: true } : {}),
    ...(Object.keys(entry.mounts).length ? { mounts: entry.mounts } : {}),
    dataDir: dir,
    options: entry.options,
  };
}

/** Every environment the lockfile pins and the store holds. */
export function listInstalled(opts: StoreOptions = {}): InstalledEnvironment[] {
  const lock = readLockfile(resolve(opts.projectDir ?? process.cwd()));
  return Object.keys(lock.environments)
    .sort()
    .map((name) => resolveInstalled(name, undefined, opts))
    .filter((e): e is InstalledEnvironment => e !== undefined);
}

export interface RemoveResult {
  name: string;
  /** The version the lockfile pinned, or undefined when it pinned none. */
  version?: string;
  removed: boolean;
  /** docker: the image tag that the store built for it (the caller may delete it). */
  image?: string;
}

/** Removes an environment's folder (every version) and its lockfile entry. */
export function removeEnvironment(name: string, opts: StoreOptions = {}): RemoveResult {
  const projectDir = resolve(opts.projectDir ?? process.cwd());
  const lock = readLockfile(projectDir);
  const entry = lock.environments[name];
  const folder = join(envsRoot(projectDir), name);
  const hadFolder = existsSync(folder);
  rmSync(folder, { recursive: true, force: true });
  if (entry) {
    delete lock.environments[name];
    writeLockfile(projectDir, lock);
  }
  const root = envsRoot(projectDir);
  if (existsSync(root) && readdirSync(root).length === 0) rmSync(root, { recursive: true });
  return {
    name,
    ...(entry ? { version: entry.version } : {}),
    removed: !!entry || hadFolder,
    ...(entry?.image && !entry.imageProvided ? { image: entry.image } : {}),
  };
}

