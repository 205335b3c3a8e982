import { readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { EnvironmentNotFoundError, InvalidRegistryError, RegistryUnreadableError } from "./errors.ts";
import { type Registry, type RegistryEnvironment, RegistrySchema, type RegistryVersion } from "./schema.ts";
import { pickLatest } from "./semver.ts";

/** The repository root: where the built-in `registry.json` and `environments/` live. */
export const REPO_ROOT = resolve(import.meta.dirname, "..", "..");

/** The registry used when none is named: `$AGENTJET_REGISTRY`, else the repo's own `registry.json`. */
export function defaultRegistryLocation(): string {
  return process.env["AGENTJET_REGISTRY"] || join(REPO_ROOT, "registry.json");
}

export interface LoadedRegistry {
  registry: Registry;
  /** Where it was read from (a path or URL). */
  location: string;
  /** What relative `path` and `tarball` sources resolve against: the registry file's folder or URL. */
  base: string;
}

function isUrl(s: string): boolean {
  return /^(https?|file):\/\//.test(s);
}

async function readLocation(location: string): Promise<string> {
  if (location.startsWith("file://")) return readFileSync(fileURLToPath(location), "utf8");
  if (isUrl(location)) {
    const res = await fetch(location);
    if (!res.ok) throw new RegistryUnreadableError(`registry ${location}: HTTP ${res.status}`);
    return res.text();
  }
  return readFileSync(location, "utf8");
}

export function parseRegistry(text: string, location: string): Registry {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new InvalidRegistryError(`registry ${location} is not valid JSON: ${(cause as Error).message}`, cause);
  }
  const parsed = RegistrySchema.safeParse(json);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new InvalidRegistryError(`registry ${location} is invalid:\n${lines.join("\n")}`, parsed.error);
  }
  return parsed.data;
}

export async function loadRegistry(location: string = defaultRegistryLocation(), cwd = process.cwd()): Promise<LoadedRegistry> {
  const where = isUrl(location) || isAbsolute(location) ? location : resolve(cwd, location);
  let text: string;
  try {
    text = await readLocation(where);
  } catch (cause) {
    if (cause instanceof RegistryUnreadableError) throw cause;
    throw new RegistryUnreadableError(`cannot read registry ${where}: ${(cause as Error).message}`, cause);
  }
  const base = isUrl(where) ? new URL(".", where).href : dirname(where);
  return { registry: parseRegistry(text, where), location: where, base };
}

export interface ResolvedVersion {
  name: string;
  version: string;
  environment: RegistryEnvironment;
  entry: RegistryVersion;
}

/** Picks `name@version` (the newest release when no version is given). */
export function findVersion(registry: Registry, name: string, version?: string): ResolvedVersion {
  const environment = registry.environments[name];
  if (!environment) throw new EnvironmentNotFoundError(`no environment '${name}' in the registry`);
  const chosen = version ?? pickLatest(Object.keys(environment.versions));
  const entry = chosen ? environment.versions[chosen] : undefined;
  if (!chosen || !entry) {
    const known = Object.keys(environment.versions).join(", ");
    throw new EnvironmentNotFoundError(`no version ${version} of '${name}' in the registry (known: ${known})`);
  }
  return { name, version: chosen, environment, entry };
}

/** Resolves a relative location in the registry against its base (folder or URL). */
export function resolveAgainst(base: string, location: string): string {
  if (isUrl(location) || isAbsolute(location)) return location;
  return isUrl(base) ? new URL(location, base).href : join(base, location);
}
