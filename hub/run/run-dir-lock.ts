import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { isAlive } from "../sweep/processes.ts";
import { RunDirLockedError } from "../train/errors.ts";

/** Who holds a run directory: written into `<run-dir>/run.lock` by the process that runs it. */
interface LockHolder {
  pid: number;
  host: string;
  since: string;
}

export interface RunDirLock {
  /** Removes the lock file (if it is still this process's); idempotent. */
  release(): void;
}

const LOCK_FILE = "run.lock";

function readHolder(path: string): LockHolder | null {
  try {
    const h = JSON.parse(readFileSync(path, "utf8")) as Partial<LockHolder>;
    return typeof h.pid === "number" && typeof h.host === "string" ? { pid: h.pid, host: h.host, since: String(h.since ?? "?") } : null;
  } catch {
    return null;
  }
}

/**
 * Takes `<runDir>/run.lock` for this process, so that a second `train`, `train --resume` or `serve` on the
 * same directory is refused instead of writing the same run.db, metrics.jsonl and checkpoints at once.
 * A lock left by a process of this host that is gone (killed, crashed) is taken over; one held by a live
 * process, or by another host (a shared file system), is not. The lock is released by `release` or when
 * the process exits.
 */
export function lockRunDir(runDir: string): RunDirLock {
  const path = join(runDir, LOCK_FILE);
  const me: LockHolder = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, "wx", 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = readHolder(path);
      if (holder === null && attempt === 0) {
        // a lock being written this instant (else a damaged one, refused next time round)
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
        continue;
      }
      const stale = holder !== null && holder.host === me.host && !isAlive(holder.pid);
      if (!stale || attempt > 1) throw new RunDirLockedError(runDir, holder, path);
      try {
        unlinkSync(path);
      } catch {
        // another process took it over first: the next attempt says who holds it
      }
      continue;
    }
    try {
      writeSync(fd, `${JSON.stringify(me)}\n`);
    } finally {
      closeSync(fd);
    }
    break;
  }
  let held = true;
  const release = (): void => {
    if (!held) return;
    held = false;
    process.removeListener("exit", release);
    if (readHolder(path)?.pid !== me.pid) return;
    try {
      unlinkSync(path);
    } catch {
      // the directory is gone: so is the lock
    }
  };
  process.on("exit", release);
  return { release };
}
