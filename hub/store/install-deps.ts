import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Manifest } from "../../sdk/env/index.ts";
import { DependencyInstallError } from "./errors.ts";

interface PackageJson {
  name?: string;
  version?: string;
  private?: boolean;
  dependencies?: Record<string, string>;
}

/**
 * The manifest's `dependencies` join the plugin's package.json ones; when the plugin has no package.json
 * but declares dependencies, one is written, so npm has something to install from.
 */
function ensurePackageJson(dir: string, manifest: Manifest): Record<string, string> {
  const path = join(dir, "package.json");
  const pkg: PackageJson = existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as PackageJson) : {};
  const deps = { ...(pkg.dependencies ?? {}), ...manifest.dependencies };
  if (Object.keys(deps).length === 0) return deps;
  if (!existsSync(path) || Object.keys(manifest.dependencies).some((k) => pkg.dependencies?.[k] !== manifest.dependencies[k])) {
    const next: PackageJson = { name: pkg.name ?? `agentjet-env-${manifest.name}`, version: pkg.version ?? manifest.version, private: true, ...pkg, dependencies: deps };
    writeFileSync(path, `${JSON.stringify(next, null, 2)}\n`);
  }
  return deps;
}

/**
 * Installs an environment's own npm dependencies into its own folder (`node_modules` beside its code), so
 * environments never share a dependency tree. Install scripts run only when the manifest says so.
 */
export async function installDependencies(dir: string, manifest: Manifest, log: (line: string) => void): Promise<number> {
  const deps = ensurePackageJson(dir, manifest);
  const count = Object.keys(deps).length;
  if (count === 0) return 0;
  const ci = existsSync(join(dir, "package-lock.json"));
  const args = [ci ? "ci" : "install", "--omit=dev", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"];
  if (!manifest.installScripts) args.push("--ignore-scripts");
  log(`installing ${count} dependenc${count === 1 ? "y" : "ies"} (npm ${args.join(" ")})`);
  const stderr: string[] = [];
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn("npm", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, npm_config_update_notifier: "false" } });
    child.stderr.on("data", (d: Buffer) => stderr.push(d.toString()));
    child.on("error", reject);
    child.on("exit", (c) => resolve(c ?? 1));
  });
  if (code !== 0) throw new DependencyInstallError(`npm ${args[0]} failed in ${dir} (exit ${code}):\n${stderr.join("").trim()}`);
  return count;
}
