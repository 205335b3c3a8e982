import { InvalidTarballError, UnpackablePathError } from "./errors.ts";

/**
 * A minimal ustar writer and reader. The writer is deterministic by construction: the caller passes
 * entries in order, and every header carries fixed owner, group, mtime and modes. The reader accepts
 * what `env pack` and `npm pack` write (ustar, pax and GNU long names) and refuses links and paths that
 * leave the target folder.
 */
export interface TarEntry {
  /** Posix path relative to the archive root; directories end without a slash. */
  path: string;
  type: "file" | "dir";
  /** File bytes; absent for directories. */
  data?: Buffer;
  executable?: boolean;
}

const BLOCK = 512;

function writeString(header: Buffer, value: string, offset: number, length: number): void {
  const bytes = Buffer.from(value, "utf8");
  if (bytes.length > length) throw new UnpackablePathError(`tar field too long: ${value}`);
  bytes.copy(header, offset);
}

function writeOctal(header: Buffer, value: number, offset: number, length: number): void {
  header.write(value.toString(8).padStart(length - 1, "0") + "\0", offset, length, "ascii");
}

function splitName(path: string): { name: string; prefix: string } {
  if (Buffer.byteLength(path) <= 100) return { name: path, prefix: "" };
  for (let i = path.lastIndexOf("/"); i > 0; i = path.lastIndexOf("/", i - 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100) return { name, prefix };
  }
  throw new UnpackablePathError(`path too long to pack (ustar limits: 155 + 100 bytes): ${path}`);
}

function header(entry: TarEntry): Buffer {
  const h = Buffer.alloc(BLOCK);
  const { name, prefix } = splitName(entry.type === "dir" ? `${entry.path}/` : entry.path);
  writeString(h, name, 0, 100);
  writeOctal(h, entry.type === "dir" || entry.executable ? 0o755 : 0o644, 100, 8);
  writeOctal(h, 0, 108, 8);
  writeOctal(h, 0, 116, 8);
  writeOctal(h, entry.data?.length ?? 0, 124, 12);
  writeOctal(h, 0, 136, 12);
  h.fill(" ", 148, 156);
  h.write(entry.type === "dir" ? "5" : "0", 156, 1, "ascii");
  h.write("ustar\u000000", 257, 8, "ascii");
  writeString(h, prefix, 345, 155);
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(sum.toString(8).padStart(6, "0") + "\0 ", 148, 8, "ascii");
  return h;
}

export function writeTar(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    parts.push(header(entry));
    if (entry.type === "file" && entry.data) {
      parts.push(entry.data);
      const pad = (BLOCK - (entry.data.length % BLOCK)) % BLOCK;
      if (pad) parts.push(Buffer.alloc(pad));
    }
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(parts);
}

function readString(buf: Buffer, offset: number, length: number): string {
  const slice = buf.subarray(offset, offset + length);
  const end = slice.indexOf(0);
  return slice.subarray(0, end === -1 ? length : end).toString("utf8");
}

function readOctal(buf: Buffer, offset: number, length: number): number {
  const text = readString(buf, offset, length).trim();
  return text ? Number.parseInt(text, 8) : 0;
}

function parsePax(data: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < data.length) {
    const space = data.indexOf(0x20, i);
    if (space === -1) break;
    const len = Number.parseInt(data.subarray(i, space).toString("ascii"), 10);
    if (!Number.isFinite(len) || len <= 0) break;
    const record = data.subarray(space + 1, i + len - 1).toString("utf8");
    const eq = record.indexOf("=");
    if (eq > 0) out[record.slice(0, eq)] = record.slice(eq + 1);
    i += len;
  }
  return out;
}

function checkPath(path: string): string {
  const clean = path.replace(/^\.\//, "").replace(/\/+$/, "");
  const parts = clean.split("/");
  if (clean.startsWith("/") || parts.some((p) => p === "..") || clean.includes("\\") || clean.includes("\0")) {
    throw new InvalidTarballError(`tarball entry leaves its folder: ${path}`);
  }
  return clean;
}

/** Reads a tar archive (uncompressed) into entries, in archive order. */
export function readTar(buf: Buffer): TarEntry[] {
  const entries: TarEntry[] = [];
  let offset = 0;
  let longName: string | undefined;
  let paxPath: string | undefined;
  while (offset + BLOCK <= buf.length) {
    const h = buf.subarray(offset, offset + BLOCK);
    if (h.every((b) => b === 0)) break;
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i]!;
    if (sum !== readOctal(h, 148, 8)) throw new InvalidTarballError(`tarball header checksum mismatch at byte ${offset}`);
    const size = readOctal(h, 124, 12);
    const type = String.fromCharCode(h[156]!);
    const dataStart = offset + BLOCK;
    if (dataStart + size > buf.length) throw new InvalidTarballError("tarball is truncated");
    const data = Buffer.from(buf.subarray(dataStart, dataStart + size));
    offset = dataStart + Math.ceil(size / BLOCK) * BLOCK;
    if (type === "x") {
      paxPath = parsePax(data)["path"];
      continue;
    }
    if (type === "g") continue;
    if (type === "L") {
      longName = readString(data, 0, data.length);
      continue;
    }
    const prefix = readString(h, 345, 155);
    const name = readString(h, 0, 100);
    const raw = paxPath ?? longName ?? (prefix ? `${prefix}/${name}` : name);
    paxPath = undefined;
    longName = undefined;
    const path = checkPath(raw);
    if (!path) continue;
    if (type === "5") entries.push({ path, type: "dir" });
    else if (type === "0" || type === "\0" || type === "7") {
      entries.push({ path, type: "file", data, executable: (readOctal(h, 100, 8) & 0o100) !== 0 });
    } else throw new InvalidTarballError(`tarball entry '${path}' is a link or device (type '${type}'); only files and folders are allowed`);
  }
  return entries;
}
