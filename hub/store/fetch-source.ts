import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveAgainst } from "../registry/load-registry.ts";
import { extractTar, packTree, ungzipIfNeeded } from "../registry/pack-tree.ts";
import type { Source } from "../registry/schema.ts";
import { SourceFetchError, SourceNotFoundError } from "./errors.ts";

export interface FetchedSource {
  /** The canonical tar of the plugin's content, and its sha256. */
  tar: Buffer;
  sha256: string;
  /** The source with relative paths resolved, as the lockfile records it. */
  resolved: Source;
  /** For a tarball: the sha256 of the file's bytes as read (compressed), which `sha256sum x.tgz` prints. */
  fileSha256?: string;
}

async function readBytes(location: string): Promise<Buffer> {
  try {
    if (location.startsWith("file://")) return readFileSync(fileURLToPath(location));
    if (/^https?:\/\//.test(location)) {
      const res = await fetch(location);
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      return Buffer.from(await res.arrayBuffer());
    }
    return readFileSync(location);
  } catch (cause) {
    throw new SourceFetchError(`cannot read ${location}: ${(cause as Error).message}`, cause);
  }
}

function withTempDir<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), "agentjet-fetch-"));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Canonical content of a tarball: extracted, then packed again, so excluded paths never count. */
function canonicalFromTarball(bytes: Buffer): { tar: Buffer; sha256: string; fileSha256: string } {
  const fileSha256 = createHash("sha256").update(bytes).digest("hex");
  return withTempDir((dir) => {
    try {
      extractTar(ungzipIfNeeded(bytes), dir);
    } catch (cause) {
      throw new SourceFetchError(`not a readable tarball: ${(cause as Error).message}`, cause);
    }
    const { tar, sha256 } = packTree(dir);
    return { tar, sha256, fileSha256 };
  });
}

function run(cmd: string, args: string[], cwd?: string): string {
  try {
    return execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (cause) {
    const stderr = (cause as { stderr?: string }).stderr ?? "";
    throw new SourceFetchError(`${cmd} ${args.join(" ")} failed: ${stderr.trim() || (cause as Error).message}`, cause);
  }
}

/** Reads a source's content, wherever it lives, as its canonical tar. Nothing is written to the store. */
export async function fetchSource(source: Source, base: string): Promise<FetchedSource> {
  switch (source.type) {
    case "path": {
      const abs = resolveAgainst(base, source.path);
      if (!existsSync(abs)) {
        const what = /\.(tgz|tar|tar\.gz)$/.test(abs) ? "tarball" : "source folder or tarball";
        throw new SourceNotFoundError(`${what} ${abs} does not exist`);
      }
      if (statSync(abs).isFile()) {
        return { ...canonicalFromTarball(await readBytes(abs)), resolved: { type: "tarball", url: abs } };
      }
      const { tar, sha256 } = packTree(abs);
      return { tar, sha256, resolved: { type: "path", path: abs } };
    }
    case "tarball": {
      const location = resolveAgainst(base, source.url);
      return { ...canonicalFromTarball(await readBytes(location)), resolved: { type: "tarball", url: location } };
    }
    case "npm":
      return withTempDir((dir) => {
        run("npm", ["pack", source.spec, "--pack-destination", dir, "--silent", "--ignore-scripts"], dir);
        const tgz = readdirSync(dir).find((f) => f.endsWith(".tgz"));
        if (!tgz) throw new SourceFetchError(`npm pack ${source.spec} wrote no tarball`);
        return { ...canonicalFromTarball(readFileSync(join(dir, tgz))), resolved: source };
      });
    case "git":
      return withTempDir((dir) => {
        const url = resolveAgainst(base, source.url);
        run("git", ["clone", "--quiet", "--no-checkout", url, dir]);
        run("git", ["-c", "advice.detachedHead=false", "checkout", "--quiet", source.commit], dir);
        const root = source.subdir ? join(dir, source.subdir) : dir;
        if (!existsSync(root)) throw new SourceFetchError(`${source.subdir} does not exist at ${source.commit}`);
        const { tar, sha256 } = packTree(root);
        return { tar, sha256, resolved: { ...source, url } };
      });
  }
}
