import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Manifest } from "../../sdk/env/index.ts";
import { ManifestSchema } from "../../sdk/env/schemas.ts";
import { bundleVmPlugin, buildDockerImage } from "../../plugins/index.ts";
import { findVersion, loadRegistry } from "../registry/load-registry.ts";
import type { Source } from "../registry/schema.ts";
import { extractTar } from "../registry/pack-tree.ts";
import { readTar } from "../registry/tar.ts";
import { BuildFailedError, IntegrityError, InvalidPluginError, SmokeCheckFailedError } from "./errors.ts";
import { type FetchedSource, fetchSource } from "./fetch-source.ts";
import { installDependencies } from "./install-deps.ts";
import { linkAgentjet } from "./link-agentjet.ts";
import { type LockEntry, readLockfile, stableJson, writeLockfile } from "./lockfile.ts";
import { BUNDLE_FILE, envDir, envsRoot, imageTag, INSTALL_FILE } from "./paths.ts";
import { MANIFEST_FILE } from "./read-manifest.ts";
import { runPrepare } from "./run-prepare.ts";
import { runSmokeCheck, type SmokeResult } from "./smoke-check.ts";

export interface AddEnvironmentOptions {
  /** The environment's name (its registry key; with `source`, it must match the manifest's name). */
  name: string;
  /** An exact version; the registry's newest release when absent. */
  version?: string;
  /** The project whose store and lockfile are used (default: the working directory). */
  projectDir?: string;
  /** A registry path or URL (default: `$AGENTJET_REGISTRY`, else the repo's registry.json). */
  registry?: string;
  /** A plugin folder or tarball to install instead of the registry's source. Verified against the
   * registry's hash when the registry lists that name@version, or against `sha256`. */
  source?: string;
  /** The sha256 the content must have (overrides the registry's). */
  sha256?: string;
  /** Passed to the prepare hook as `options.data` (resolved to an absolute path). */
  data?: string;
  /** Passed to the prepare hook (`--option k=v`). */
  options?: Record<string, string>;
  /** docker: host folders for the manifest's named mounts. */
  mounts?: Record<string, string>;
  /** docker: run this local image instead of building one. */
  image?: string;
  /** Run the smoke check (default: true). */
  smoke?: boolean;
  /** Whether prepare hooks may download (default: true). */
  online?: boolean;
  /** Reinstall even when the lockfile already pins this exact content and it is installed. */
  force?: boolean;
  onProgress?: (line: string) => void;
}

export interface AddResult {
  name: string;
  version: string;
  sha256: string;
  kind: "vm" | "docker";
  dir: string;
  /** How the content was checked: against the registry, a pinned hash (`sha256` or the lockfile), or not at all. */
  verified: "registry" | "pinned" | "unverified";
  /**
   * Which hash the pin matched: `content` (the sha256 of the canonical uncompressed tar, what `env pack`
   * prints and registries pin) or `tarball-file` (the sha256 of the .tgz bytes, what `sha256sum` prints).
   * The lockfile always pins the content hash.
   */
  matched?: "content" | "tarball-file";
  bundlePath?: string;
  image?: string;
  smoke?: SmokeResult;
  /** True when the lockfile already pinned this content and it was installed: nothing was done. */
  alreadyInstalled: boolean;
  /** Wall time of each step, seconds. */
  timings: Record<string, number>;
}

/** Everything an install needs once its source and expected hash are known. */
interface PinnedInstall {
  projectDir: string;
  name?: string;
  version?: string;
  kind?: "vm" | "docker";
  fetched: FetchedSource;
  expectedSha?: string;
  verifiedBy: "registry" | "pinned" | "unverified";
  options: Record<string, string>;
  mounts: Record<string, string>;
  image?: string;
  smoke: boolean;
  online: boolean;
  log: (line: string) => void;
}

function manifestFromTar(tar: Buffer): Manifest {
  const entry = readTar(tar).find((e) => e.path === MANIFEST_FILE && e.type === "file");
  if (!entry?.data) throw new InvalidPluginError(`the content has no ${MANIFEST_FILE} at its root: not an environment plugin`);
  const parsed = ManifestSchema.safeParse(JSON.parse(entry.data.toString("utf8")));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new InvalidPluginError(`${MANIFEST_FILE} is invalid:\n${lines.join("\n")}`, parsed.error);
  }
  return parsed.data;
}

function removeIfEmpty(dir: string): void {
  if (existsSync(dir) && readdirSync(dir).length === 0) rmSync(dir, { recursive: true, force: true });
}

async function timed<T>(timings: Record<string, number>, step: string, fn: () => Promise<T> | T): Promise<T> {
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    timings[step] = Math.round(performance.now() - t0) / 1000;
  }
}

function labelOf(manifest: Manifest): string {
  return `${manifest.name}@${manifest.version}`;
}

/** The content is what was asked for: the name, version and kind the caller (or registry) expects. */
function checkIdentity(p: PinnedInstall, manifest: Manifest): void {
  const label = labelOf(manifest);
  if (p.name && manifest.name !== p.name) throw new InvalidPluginError(`the content is '${manifest.name}', not '${p.name}'`);
  if (p.version && manifest.version !== p.version) {
    throw new InvalidPluginError(`the content is ${label}, but version ${p.version} was asked for`);
  }
  if (p.kind && manifest.kind !== p.kind) throw new InvalidPluginError(`${label} is kind '${manifest.kind}', the registry says '${p.kind}'`);
}

/** Checks the content against the expected hash, if any; returns which hash it matched. */
function verifyHash(p: PinnedInstall, label: string): AddResult["matched"] {
  const expected = p.expectedSha?.toLowerCase();
  const matched = !expected ? undefined : expected === p.fetched.sha256 ? "content" : expected === p.fetched.fileSha256 ? "tarball-file" : undefined;
  if (expected && !matched) {
    throw new IntegrityError(
      `sha256 mismatch for ${label}: expected ${expected}, but neither the content sha256 (of the canonical uncompressed tar, ` +
        `what \`agentjet env pack\` prints)${p.fetched.fileSha256 ? " nor the tarball file's sha256 (what `sha256sum` prints)" : ""} matches. ` +
        "It may be corrupt or tampered with; nothing was installed. Do not copy a hash from this message: take it from " +
        "`agentjet env pack` on the source you reviewed." +
        (p.fetched.resolved.type === "path"
          ? ` If you edited ${p.fetched.resolved.path} on purpose, re-pin it: agentjet env pack ${p.fetched.resolved.path} --write-registry <registry.json>`
          : ""),
      expected,
      p.fetched.sha256,
    );
  }
  p.log(
    `${label}: content sha256 ${p.fetched.sha256.slice(0, 16)}… ${
      !matched ? "(no pinned hash to check)" : matched === "content" ? "verified" : "verified (the pin is the tarball file's sha256; agentjet.lock pins the content sha256)"
    }`,
  );
  return matched;
}

/** Where an install is staged and placed, and which store folders it creates (a failure removes them). */
interface StoreLayout {
  root: string;
  stagingRoot: string;
  staging: string;
  final: string;
  createdRoot: boolean;
  createdAgentjet: boolean;
}

function planStore(projectDir: string, manifest: Manifest): StoreLayout {
  const root = envsRoot(projectDir);
  const stagingRoot = join(root, ".staging");
  return {
    root,
    stagingRoot,
    // A fixed staging path keeps install outputs (bundle, npm metadata) free of random names.
    staging: join(stagingRoot, labelOf(manifest)),
    final: envDir(projectDir, manifest.name, manifest.version),
    createdRoot: !existsSync(root),
    createdAgentjet: !existsSync(dirname(root)),
  };
}

/** Extracts the content into `staging`, installs its dependencies and runs its prepare hook. */
async function assembleStaging(p: PinnedInstall, manifest: Manifest, staging: string, timings: Record<string, number>): Promise<void> {
  const label = labelOf(manifest);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  await timed(timings, "extract", () => extractTar(p.fetched.tar, staging));
  await timed(timings, "dependencies", () => installDependencies(staging, manifest, (l) => p.log(`${label}: ${l}`)));
  linkAgentjet(staging);
  if (manifest.prepare) {
    p.log(`${label}: running prepare hook ${manifest.prepare}`);
    await timed(timings, "prepare", () =>
      runPrepare({ dir: staging, manifest, options: p.options, online: p.online, cacheKey: p.fetched.sha256, log: (l) => p.log(`${label}: prepare: ${l}`) }),
    );
  }
}

/** vm: bundles the staged plugin. docker: uses the given image or builds one; returns its tag. */
async function buildForSandbox(p: PinnedInstall, manifest: Manifest, staging: string, timings: Record<string, number>): Promise<string | undefined> {
  const label = labelOf(manifest);
  if (manifest.kind === "vm") {
    p.log(`${label}: bundling for isolated-vm`);
    await timed(timings, "bundle", async () => {
      try {
        await bundleVmPlugin(staging, manifest, join(staging, BUNDLE_FILE));
      } catch (cause) {
        throw new BuildFailedError(`bundling ${label} failed: ${(cause as Error).message}`, cause);
      }
    });
    return undefined;
  }
  if (p.image) {
    p.log(`${label}: using image ${p.image}`);
    return p.image;
  }
  const tag = imageTag(manifest.name, p.fetched.sha256);
  p.log(`${label}: building image ${tag}`);
  await timed(timings, "image", async () => {
    try {
      await buildDockerImage({ dir: staging, manifest, tag, onProgress: (l: string) => p.log(`${label}: docker: ${l}`) });
    } catch (cause) {
      throw new BuildFailedError(`building the image of ${label} failed: ${(cause as Error).message}`, cause);
    }
  });
  return tag;
}

/** Runs the smoke check on the staged install (skipped when a named mount is not given); a failure throws. */
async function smokeCheckStaged(
  p: PinnedInstall,
  manifest: Manifest,
  staging: string,
  image: string | undefined,
  timings: Record<string, number>,
): Promise<SmokeResult> {
  const label = labelOf(manifest);
  let smoke: SmokeResult;
  const missing = (manifest.docker?.mounts ?? []).map((m) => m.name).filter((n) => !p.mounts[n]);
  if (missing.length) {
    smoke = { kind: "skipped", reason: `mounts not given: ${missing.join(", ")}` };
  } else {
    p.log(`${label}: smoke check (reset + one step)`);
    const openOpts = {
      dir: staging,
      manifest,
      ...(manifest.kind === "vm" ? { bundlePath: join(staging, BUNDLE_FILE) } : {}),
      ...(image ? { image } : {}),
      ...(Object.keys(p.mounts).length ? { mounts: p.mounts } : {}),
    };
    smoke = await timed(timings, "smoke", () => runSmokeCheck(openOpts));
  }
  if (smoke.kind === "failed") throw new SmokeCheckFailedError(`${label} failed its smoke check: ${smoke.message}`);
  p.log(`${label}: smoke check ${smoke.kind === "ok" ? `passed (task ${smoke.task})` : `skipped: ${smoke.reason}`}`);
  return smoke;
}

/** Writes the install record into `staging` and renames it over `final` (the previous install goes). */
function placeStaging(p: PinnedInstall, manifest: Manifest, store: StoreLayout, image: string | undefined): void {
  const info = { name: manifest.name, version: manifest.version, sha256: p.fetched.sha256, kind: manifest.kind, ...(manifest.kind === "vm" ? { bundle: BUNDLE_FILE } : {}), ...(image ? { image } : {}) };
  writeFileSync(join(store.staging, INSTALL_FILE), stableJson(info));
  mkdirSync(dirname(store.final), { recursive: true });
  const old = `${store.final}.old`;
  rmSync(old, { recursive: true, force: true });
  if (existsSync(store.final)) renameSync(store.final, old);
  renameSync(store.staging, store.final);
  rmSync(old, { recursive: true, force: true });
}

/** After a failure: removes the staging folder and the store folders this install created, if empty. */
function removeFailedStaging(store: StoreLayout): void {
  rmSync(store.staging, { recursive: true, force: true });
  removeIfEmpty(store.stagingRoot);
  if (store.createdRoot) {
    for (const d of readdirSync(store.root)) removeIfEmpty(join(store.root, d));
    removeIfEmpty(store.root);
  }
  if (store.createdAgentjet) removeIfEmpty(dirname(store.root));
}

/** Pins the install in `agentjet.lock`, and removes the folder of the version it replaces. */
function pinInLockfile(p: PinnedInstall, manifest: Manifest, image: string | undefined): void {
  const lock = readLockfile(p.projectDir);
  const entry: LockEntry = {
    version: manifest.version,
    sha256: p.fetched.sha256,
    kind: manifest.kind,
    source: p.fetched.resolved,
    options: p.options,
    mounts: p.mounts,
    ...(image ? { image } : {}),
    ...(p.image ? { imageProvided: true } : {}),
  };
  const previous = lock.environments[manifest.name];
  lock.environments[manifest.name] = entry;
  writeLockfile(p.projectDir, lock);
  if (previous && previous.version !== manifest.version) {
    rmSync(envDir(p.projectDir, manifest.name, previous.version), { recursive: true, force: true });
  }
}

/**
 * Installs fetched content: checks it is what was asked for and matches its pin, builds it in a staging
 * folder (dependencies, prepare, bundle or image, smoke check), renames it into the store and pins it.
 */
async function installPinned(p: PinnedInstall, timings: Record<string, number>): Promise<AddResult> {
  const manifest = manifestFromTar(p.fetched.tar);
  checkIdentity(p, manifest);
  const matched = verifyHash(p, labelOf(manifest));
  const store = planStore(p.projectDir, manifest);
  let image: string | undefined;
  let smoke: SmokeResult | undefined;
  try {
    await assembleStaging(p, manifest, store.staging, timings);
    image = await buildForSandbox(p, manifest, store.staging, timings);
    if (p.smoke) smoke = await smokeCheckStaged(p, manifest, store.staging, image, timings);
    placeStaging(p, manifest, store, image);
  } catch (cause) {
    removeFailedStaging(store);
    throw cause;
  }
  removeIfEmpty(store.stagingRoot);
  pinInLockfile(p, manifest, image);
  return {
    name: manifest.name,
    version: manifest.version,
    sha256: p.fetched.sha256,
    kind: manifest.kind,
    dir: store.final,
    verified: p.verifiedBy,
    ...(matched ? { matched } : {}),
    ...(manifest.kind === "vm" ? { bundlePath: join(store.final, BUNDLE_FILE) } : {}),
    ...(image ? { image } : {}),
    ...(smoke ? { smoke } : {}),
    alreadyInstalled: false,
    timings,
  };
}

/** `--source`: a URL is a tarball to download; anything else is a local folder or tarball. */
function sourceFromFlag(source: string): Source {
  return /^(https?|file):\/\//.test(source) ? { type: "tarball", url: source } : { type: "path", path: resolve(source) };
}

function isInstalled(projectDir: string, name: string, entry: LockEntry | undefined): entry is LockEntry {
  return !!entry && existsSync(join(envDir(projectDir, name, entry.version), INSTALL_FILE));
}

function describeSource(source: Source): string {
  switch (source.type) {
    case "path":
      return source.path;
    case "tarball":
      return source.url;
    case "npm":
      return `npm:${source.spec}`;
    case "git":
      return `${source.url}#${source.commit}`;
  }
}

/**
 * `agentjet env add`: resolves an environment, fetches and verifies its content, installs its
 * dependencies, bundles it (vm) or builds its image (docker), smoke-checks it, and pins it in the
 * lockfile. Staged and renamed into place: a failed install leaves the store and lockfile as they were.
 */
export async function addEnvironment(opts: AddEnvironmentOptions): Promise<AddResult> {
  const t0 = performance.now();
  const timings: Record<string, number> = {};
  const projectDir = resolve(opts.projectDir ?? process.cwd());
  const log = opts.onProgress ?? (() => {});
  const options = { ...(opts.options ?? {}), ...(opts.data ? { data: resolve(opts.data) } : {}) };
  const mounts = Object.fromEntries(Object.entries(opts.mounts ?? {}).map(([k, v]) => [k, resolve(v)]));
  const loaded = await loadRegistry(opts.registry);
  let fetched: FetchedSource;
  let expectedSha = opts.sha256;
  let kind: "vm" | "docker" | undefined;
  let version = opts.version;
  let verifiedBy: AddResult["verified"] = expectedSha ? "pinned" : "unverified";
  if (opts.source) {
    log(`${opts.name}: reading ${opts.source}`);
    fetched = await timed(timings, "fetch", () => fetchSource(sourceFromFlag(opts.source as string), projectDir));
    const manifest = manifestFromTar(fetched.tar);
    const listed = loaded.registry.environments[manifest.name]?.versions[manifest.version];
    if (!expectedSha && listed) {
      expectedSha = listed.sha256;
      verifiedBy = "registry";
    }
  } else {
    const found = findVersion(loaded.registry, opts.name, opts.version);
    version = found.version;
    kind = found.entry.kind;
    if (!expectedSha) {
      expectedSha = found.entry.sha256;
      verifiedBy = "registry";
    }
    const lock = readLockfile(projectDir);
    const pinned = lock.environments[opts.name];
    if (!opts.force && isInstalled(projectDir, opts.name, pinned) && pinned.version === version && pinned.sha256 === expectedSha) {
      log(`${opts.name}@${version}: already installed`);
      const dir = envDir(projectDir, opts.name, version);
      return {
        name: opts.name,
        version,
        sha256: pinned.sha256,
        kind: pinned.kind,
        dir,
        verified: verifiedBy,
        ...(pinned.kind === "vm" ? { bundlePath: join(dir, BUNDLE_FILE) } : {}),
        ...(pinned.image ? { image: pinned.image } : {}),
        alreadyInstalled: true,
        timings: { total: Math.round(performance.now() - t0) / 1000 },
      };
    }
    log(`${opts.name}@${version}: fetching ${describeSource(found.entry.source)}`);
    fetched = await timed(timings, "fetch", () => fetchSource(found.entry.source, loaded.base));
  }
  const result = await installPinned(
    {
      projectDir,
      name: opts.name,
      ...(version ? { version } : {}),
      ...(kind ? { kind } : {}),
      fetched,
      ...(expectedSha ? { expectedSha } : {}),
      verifiedBy,
      options,
      mounts,
      ...(opts.image ? { image: opts.image } : {}),
      smoke: opts.smoke ?? true,
      online: opts.online ?? true,
      log,
    },
    timings,
  );
  timings["total"] = Math.round(performance.now() - t0) / 1000;
  log(`${result.name}@${result.version}: installed in ${timings["total"]} s`);
  return result;
}

export interface InstallFromLockOptions {
  projectDir?: string;
  smoke?: boolean;
  online?: boolean;
  onProgress?: (line: string) => void;
}

/** Installs exactly what `agentjet.lock` pins (same versions, same hashes, same install options). */
export async function installFromLock(opts: InstallFromLockOptions = {}): Promise<AddResult[]> {
  const projectDir = resolve(opts.projectDir ?? process.cwd());
  const log = opts.onProgress ?? (() => {});
  const lock = readLockfile(projectDir);
  const results: AddResult[] = [];
  for (const [name, entry] of Object.entries(lock.environments).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const t0 = performance.now();
    const timings: Record<string, number> = {};
    log(`${name}@${entry.version}: fetching ${describeSource(entry.source)}`);
    const fetched = await timed(timings, "fetch", () => fetchSource(entry.source, projectDir));
    const result = await installPinned(
      {
        projectDir,
        name,
        version: entry.version,
        kind: entry.kind,
        fetched,
        expectedSha: entry.sha256,
        verifiedBy: "pinned",
        options: entry.options,
        mounts: entry.mounts,
        ...(entry.imageProvided && entry.image ? { image: entry.image } : {}),
        smoke: opts.smoke ?? true,
        online: opts.online ?? true,
        log,
      },
      timings,
    );
    timings["total"] = Math.round(performance.now() - t0) / 1000;
    results.push(result);
  }
  return results;
}
