import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, lstatSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { tempDir as makeTempDir } from "../helpers/temp-dirs.ts";

export const REPO = join(import.meta.dirname, "..", "..");
export const FIXTURES = join(import.meta.dirname, "fixtures");

/** The real AIME 2024 problems in ../shared/data, beside the checkout (see its README). */
export const AIME_DATA = resolve(REPO, "../shared/data/aime-2024.jsonl");

export { removeTempDirs } from "../helpers/temp-dirs.ts";

/** A fresh folder `agentjet-hub-<prefix>-...` (see test/helpers/temp-dirs.ts). */
export function tempDir(prefix: string): string {
  return makeTempDir(`hub-${prefix}`);
}

/** The dep-seven fixture plugin as `dep-six`: the same code on is-number 6.0.0, in a fresh folder. */
export function depSixFixture(): string {
  const dir = join(tempDir("dep-six"), "dep-six");
  cpSync(join(FIXTURES, "dep-seven"), dir, { recursive: true });
  const manifestPath = join(dir, "agentjet.env.json");
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as Record<string, unknown>;
  writeFileSync(manifestPath, JSON.stringify({ ...manifest, name: "dep-six", dependencies: { "is-number": "6.0.0" } }, null, 2));
  return dir;
}

/** path -> sha256 of content (or link target) of every file under `dir`, for byte-for-byte comparisons. */
export function snapshotTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(dir, rel)).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      const st = lstatSync(join(dir, path));
      if (st.isSymbolicLink()) out[path] = `link:${readlinkSync(join(dir, path))}`;
      else if (st.isDirectory()) walk(path);
      else out[path] = createHash("sha256").update(readFileSync(join(dir, path))).digest("hex");
    }
  };
  walk("");
  return out;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node bin/agentjet.js ...args` as a child process in `cwd`. `onStdout` sees the standard output
 * so far after each chunk, with the child (to signal it mid-run). `env` adds to (or blanks) the environment.
 */
export function runCli(
  args: string[],
  cwd: string,
  onStdout?: (stdout: string, child: ChildProcess) => void,
  env: Record<string, string> = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO, "bin", "agentjet.js"), ...args], { cwd, env: { ...process.env, AGENTJET_CHILD: "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      onStdout?.(stdout, child);
    });
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

/** The one JSON object a `--json` command prints on stdout. */
export function parseJson(r: CliResult): Record<string, unknown> {
  try {
    return JSON.parse(r.stdout.trim()) as Record<string, unknown>;
  } catch {
    throw new Error(`not JSON (exit ${r.code}):\n${r.stdout}\n--- stderr ---\n${r.stderr}`);
  }
}
