import { join } from "node:path";

/** Where a project keeps its environments: `.agentjet/envs/<name>/<version>/` and `agentjet.lock`. */
export function envsRoot(projectDir: string): string {
  return join(projectDir, ".agentjet", "envs");
}

export function envDir(projectDir: string, name: string, version: string): string {
  return join(envsRoot(projectDir), name, version);
}

export function lockPath(projectDir: string): string {
  return join(projectDir, "agentjet.lock");
}

/** Install metadata inside an installed environment's folder. */
export const INSTALL_FILE = ".agentjet-install.json";
/** The vm bundle made at install time, relative to the environment's folder. */
export const BUNDLE_FILE = ".agentjet-build/bundle.js";

/** Docker image tag for an environment's content: the content hash, so a tag names exactly one content. */
export function imageTag(name: string, sha256: string): string {
  return `agentjet-env-${name}:${sha256.slice(0, 16)}`;
}
