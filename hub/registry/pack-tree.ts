import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync, chmodSync } from "node:fs";
import { dirname, join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { UnpackablePathError } from "./errors.ts";
import { readTar, type TarEntry, writeTar } from "./tar.ts";

/**
 * "Packed content": the canonical tar of a plugin folder. Entries are sorted by path (byte order),
 * folders before their contents, with owner/group 0, mtime 0, mode 0644 (0755 for folders and
 * executables), and no node_modules, VCS folders, agentjet build outputs or tarballs. Its sha256 is the
 * hash `registry.json` pins, so the same folder gives the same hash on every machine.
 */
const EXCLUDED_NAMES = new Set(["node_modules", ".git", ".hg", ".svn", ".agentjet", ".agentjet-build", ".DS_Store"]);

export function isPackExcluded(name: string): boolean {
  return EXCLUDED_NAMES.has(name) || name.endsWith(".tgz");
}

function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

function collect(root: string, rel: string, out: TarEntry[]): void {
  const names = readdirSync(join(root, rel)).filter((n) => !isPackExcluded(n)).sort(compareBytes);
  for (const name of names) {
    const path = rel ? `${rel}/${name}` : name;
    const st = statSync(join(root, path), { throwIfNoEntry: true });
    if (st.isDirectory()) {
      out.push({ path, type: "dir" });
      collect(root, path, out);
    } else if (st.isFile()) {
      out.push({ path, type: "file", data: readFileSync(join(root, path)), executable: (st.mode & 0o100) !== 0 });
    } else {
      throw new UnpackablePathError(`cannot pack '${path}': only files and folders are allowed`);
    }
  }
}

export function listPackEntries(dir: string): TarEntry[] {
  const entries: TarEntry[] = [];
  collect(dir, "", entries);
  return entries;
}

export function sha256Hex(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

export interface PackedTree {
  /** The canonical, uncompressed tar. */
  tar: Buffer;
  /** sha256 of `tar`, hex. */
  sha256: string;
  files: number;
}

export function packTree(dir: string): PackedTree {
  const entries = listPackEntries(dir);
  const tar = writeTar(entries);
  return { tar, sha256: sha256Hex(tar), files: entries.filter((e) => e.type === "file").length };
}

/** gzip with a fixed header (mtime 0), so the same tar gives the same tarball bytes. */
export function gzipTar(tar: Buffer): Buffer {
  return gzipSync(tar, { level: 9 });
}

/** Accepts a gzipped or plain tar. */
export function ungzipIfNeeded(buf: Buffer): Buffer {
  return buf[0] === 0x1f && buf[1] === 0x8b ? gunzipSync(buf) : buf;
}

/**
 * Writes the entries of a tar under `dir`. When every entry sits under one top-level folder (npm pack's
 * `package/`), that folder is stripped.
 */
export function extractTar(tar: Buffer, dir: string): void {
  let entries = readTar(tar);
  const tops = new Set(entries.map((e) => e.path.split("/")[0]));
  const [only] = tops;
  if (tops.size === 1 && only && entries.some((e) => e.path.startsWith(`${only}/`)) && !entries.some((e) => e.path === only && e.type === "file")) {
    entries = entries
      .filter((e) => e.path !== only)
      .map((e) => ({ ...e, path: e.path.slice(only.length + 1) }));
  }
  mkdirSync(dir, { recursive: true });
  for (const e of entries) {
    const target = join(dir, e.path);
    if (e.type === "dir") {
      mkdirSync(target, { recursive: true });
      continue;
    }
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, e.data ?? Buffer.alloc(0));
    chmodSync(target, e.executable ? 0o755 : 0o644);
  }
}
