import { readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { type EnvironmentRuntime, openEnvironment } from "../../plugins/index.ts";
import type { EnvironmentEntry, RunConfig } from "../../server/config/index.ts";
import { ManifestSchema } from "../../sdk/env/schemas.ts";
import { judgesWithoutEndpoint } from "../../sdk/rewards/index.ts";
import { findVersion, loadRegistry } from "../registry/index.ts";
import { addEnvironment, type InstalledEnvironment, NotInstalledError, resolveInstalled } from "../store/index.ts";
import { hashPluginDir } from "../swarm/hash-plugin-dir.ts";
import { EnvironmentSetupError, PluginMismatchError } from "./errors.ts";

export interface PreparedEnvironment {
  name: string;
  /** The installed environment; for a config `path`, the local folder as if installed (sha256: the hash of its files). */
  installed: InstalledEnvironment;
  runtime: EnvironmentRuntime;
  /** Opened from a local plugin folder (config `path`): a development version. */
  dev: boolean;
}

/** The install options a config entry asks for, as the store records them (`data` made absolute). */
function wantedOptions(options: Record<string, unknown>, baseDir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(options)) out[k] = typeof v === "string" ? v : JSON.stringify(v);
  if (out.data !== undefined && !isAbsolute(out.data)) out.data = resolve(baseDir, out.data);
  return out;
}

function sameOptions(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a).sort();
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}

/** The sha256 the registry pins for `name@version`, or undefined when the registry does not list it (installed from elsewhere). */
async function registryPin(name: string, version: string): Promise<string | undefined> {
  try {
    return findVersion((await loadRegistry()).registry, name, version).entry.sha256;
  } catch {
    return undefined;
  }
}

/**
 * Installs every environment the config names that the project's store lacks, holds as a build the
 * registry no longer pins, or holds with other options (e.g. another `data` file), then opens each one.
 */
export async function prepareEnvironments(
  config: RunConfig,
  options: { projectDir: string; maxInstances: number; log: (line: string) => void },
): Promise<PreparedEnvironment[]> {
  const out: PreparedEnvironment[] = [];
  try {
    for (const entry of config.environments) {
      try {
        if (entry.path !== undefined) {
          out.push(await openLocalPlugin(entry, config, options.projectDir));
          continue;
        }
        let installed = resolveInstalled(entry.name, entry.version, { projectDir: options.projectDir });
        // A config entry without options runs the environment as `agentjet env add` installed it (e.g.
        // appworld's `--data`); only options the config names ask for a reinstall.
        const want = installed && Object.keys(entry.options).length === 0 ? installed.options : wantedOptions(entry.options, options.projectDir);
        const pinned = installed ? await registryPin(entry.name, installed.version) : undefined;
        const stale = installed !== undefined && pinned !== undefined && pinned !== installed.sha256;
        if (!installed || stale || !sameOptions(installed.options, want)) {
          options.log(
            !installed
              ? `${entry.name}: not installed; installing it`
              : stale
                ? `${entry.name}@${installed.version}: the registry pins another build (sha256 ${pinned.slice(0, 12)}, installed ${installed.sha256.slice(0, 12)}); reinstalling`
                : `${entry.name}: reinstalling with the config's options`,
          );
          const { data, ...rest } = want;
          await addEnvironment({
            name: entry.name,
            ...(entry.version ? { version: entry.version } : {}),
            projectDir: options.projectDir,
            ...(data ? { data } : {}),
            options: rest,
            // A reinstall keeps what only `env add` can say: the host folders of docker mounts and the user's own image.
            ...(installed?.mounts ? { mounts: installed.mounts } : {}),
            ...(installed?.imageProvided && installed.image ? { image: installed.image } : {}),
            force: installed !== undefined,
            onProgress: options.log,
          });
          installed = resolveInstalled(entry.name, entry.version, { projectDir: options.projectDir });
          if (!installed) throw new NotInstalledError(`${entry.name}: the store does not list it after installing`);
        }
        const runtime = await openEnvironment({
          dir: installed.dir,
          manifest: installed.manifest,
          dataDir: installed.dataDir,
          maxInstances: Math.max(1, config.clients.concurrency),
          ...(installed.bundlePath ? { bundlePath: installed.bundlePath } : {}),
          ...(installed.image ? { image: installed.image } : {}),
          ...(installed.mounts ? { mounts: installed.mounts } : {}),
        });
        out.push({ name: entry.name, installed, runtime, dev: false });
      } catch (err) {
        throw err instanceof EnvironmentSetupError ? err : new EnvironmentSetupError(entry.name, err);
      }
    }
    for (const [i, e] of out.entries()) {
      try {
        checkJudgeEndpoints(e.installed.manifest, config);
        checkSplits(e.installed.manifest, config.environments[i]!, config);
      } catch (err) {
        throw new EnvironmentSetupError(e.name, err);
      }
    }
  } catch (err) {
    await Promise.all(out.map((e) => e.runtime.close()));
    throw err;
  }
  return out;
}

/** A config entry with `path`: the plugin folder is opened where it is, not installed (no prepare hook runs). */
async function openLocalPlugin(entry: EnvironmentEntry, config: RunConfig, projectDir: string): Promise<PreparedEnvironment> {
  const dir = resolve(projectDir, entry.path!);
  const manifest = ManifestSchema.parse(JSON.parse(readFileSync(join(dir, "agentjet.env.json"), "utf8")));
  if (manifest.name !== entry.name) throw new PluginMismatchError(`${dir} holds the plugin '${manifest.name}', not '${entry.name}'`);
  if (entry.version !== undefined && manifest.version !== entry.version) throw new PluginMismatchError(`${dir} holds version ${manifest.version}, the config asks for ${entry.version}`);
  const installed: InstalledEnvironment = {
    name: manifest.name,
    version: manifest.version,
    sha256: await hashPluginDir(dir),
    kind: manifest.kind,
    dir,
    manifest,
    dataDir: dir,
    options: {},
  };
  const runtime = await openEnvironment({ dir, manifest, dataDir: dir, maxInstances: Math.max(1, config.clients.concurrency) });
  return { name: entry.name, installed, runtime, dev: true };
}

/**
 * A judge without an endpoint fails every episode it scores, and the run retried them until it gave up:
 * refused at the start. Group judges run on the server; episode judges on the clients, here when local.
 */
/**
 * The splits the run will read (training tasks, the evaluation's, the solver warm-start's) exist in the
 * manifest: an unknown evaluation split was accepted, and then every evaluation failed, step after step.
 */
function checkSplits(manifest: { splits: Record<string, unknown> }, entry: EnvironmentEntry, config: RunConfig): void {
  const wanted: Array<[string, string]> = [[entry.split, "split (training tasks)"]];
  if (config.eval.every > 0) wanted.push(entry.evalSplit !== undefined ? [entry.evalSplit, "evalSplit"] : [config.eval.split, "eval.split"]);
  const ws = config.warmStart;
  if (ws && ws.source === "solver" && ws.steps > 0) wanted.push([ws.split, "warmStart.split"]);
  const known = Object.keys(manifest.splits);
  for (const [split, field] of wanted) {
    if (!known.includes(split)) throw new Error(`${field} '${split}' is not a split of this environment (its splits: ${known.join(", ")})`);
  }
}

function checkJudgeEndpoints(manifest: { rewardModels?: Parameters<typeof judgesWithoutEndpoint>[0] }, config: RunConfig): void {
  const missing = [...judgesWithoutEndpoint(manifest.rewardModels, "group"), ...(config.clients.local > 0 ? judgesWithoutEndpoint(manifest.rewardModels, "episode") : [])];
  if (missing.length > 0) {
    throw new Error(`judge ${missing.map((n) => `'${n}'`).join(", ")} has no endpoint: set baseUrl in the manifest's rewardModels, or $AGENTJET_JUDGE_BASE_URL where it runs`);
  }
}
