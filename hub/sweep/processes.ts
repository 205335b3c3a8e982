import { readFileSync } from "node:fs";

/** Whether a process is alive (signal 0 probes it). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A live process's command line (Linux /proc); null when it is gone or the platform has no /proc. */
export function commandLine(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  } catch {
    return null;
  }
}

/**
 * Whether `pid` is still the process a campaign recorded: alive and its command line names all of
 * `marks` (a pid reused by an unrelated process is left alone). Without /proc, alive is enough.
 */
export function isStillOurs(pid: number, marks: readonly string[]): boolean {
  if (pid === process.pid || !isAlive(pid)) return false;
  const cmd = commandLine(pid);
  return cmd === null ? process.platform !== "linux" : marks.every((m) => cmd.includes(m));
}

/** Kills a process left behind by a sweep killed outright, and waits until it is gone. */
export async function killAndWait(pid: number, timeoutMs = 15_000): Promise<boolean> {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    return true;
  }
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    // A zombie (dead, not yet reaped) has an empty command line.
    if (!isAlive(pid) || !commandLine(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}
