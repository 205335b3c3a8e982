import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { lockRunDir } from "../../../hub/run/run-dir-lock.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function runDir(): string {
  const d = mkdtempSync(join(tmpdir(), "aj-lock-"));
  dirs.push(d);
  return d;
}
/** A pid that ran on this host and is gone. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(r.stdout);
}
const holder = (pid: number, host = hostname()) => `${JSON.stringify({ pid, host, since: "2026-12-06T10:00:00.000Z" })}\n`;

describe("lockRunDir", () => {
  it("writes run.lock with this process, refuses a second holder while held, and removes it on release", () => {
    const dir = runDir();
    const lock = lockRunDir(dir);
    expect(JSON.parse(readFileSync(join(dir, "run.lock"), "utf8"))).toMatchObject({ pid: process.pid, host: hostname() });
    expect(() => lockRunDir(dir)).toThrow(/AJ_ERR_TRAIN_RUN_DIR_IN_USE|is in use by process \d+/);
    try {
      lockRunDir(dir);
    } catch (err) {
      expect((err as { code: string }).code).toBe("AJ_ERR_TRAIN_RUN_DIR_IN_USE");
      expect((err as Error).message).toContain(`is in use by process ${process.pid} on ${hostname()}`);
      expect((err as Error).message).toContain(join(dir, "run.lock"));
    }
    lock.release();
    expect(existsSync(join(dir, "run.lock"))).toBe(false);
    lock.release(); // idempotent
    lockRunDir(dir).release();
  });

  it("takes over a lock whose process is gone (killed, crashed)", () => {
    const dir = runDir();
    writeFileSync(join(dir, "run.lock"), holder(deadPid()));
    const lock = lockRunDir(dir);
    expect(JSON.parse(readFileSync(join(dir, "run.lock"), "utf8")).pid).toBe(process.pid);
    lock.release();
  });

  it("refuses a lock held by a live process, or by another host (whose processes it cannot see)", () => {
    const dir = runDir();
    writeFileSync(join(dir, "run.lock"), holder(process.ppid));
    expect(() => lockRunDir(dir)).toThrow(`in use by process ${process.ppid}`);
    writeFileSync(join(dir, "run.lock"), holder(deadPid(), "other-host"));
    expect(() => lockRunDir(dir)).toThrow("on other-host");
  });

  it("release leaves a lock that another process took over in place", () => {
    const dir = runDir();
    const lock = lockRunDir(dir);
    writeFileSync(join(dir, "run.lock"), holder(process.ppid));
    lock.release();
    expect(existsSync(join(dir, "run.lock"))).toBe(true);
  });

  it("a damaged lock file is refused, naming the file to remove", () => {
    const dir = runDir();
    writeFileSync(join(dir, "run.lock"), "{not json");
    expect(() => lockRunDir(dir)).toThrow(`is in use by another process`);
  });
});
