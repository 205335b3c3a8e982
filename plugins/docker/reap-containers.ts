import { readlinkSync } from "node:fs";
import { hostname } from "node:os";
import { dockerClient } from "./docker-client.ts";

/** This process's pid namespace (`pid:[4026531836]`), so that a pid is only read in the namespace it belongs to. */
function pidNamespace(): string {
  try {
    return readlinkSync("/proc/self/ns/pid");
  } catch {
    return "";
  }
}

/**
 * Labels naming the process that owns a container: its host name, pid namespace and pid. A process
 * killed with SIGKILL (or whose engine went away under it) cannot remove its containers; a later
 * process on the same host finds them by these labels and removes them (`reapOrphanContainers`).
 */
export function ownerLabels(): Record<string, string> {
  return { "agentjet.owner.host": hostname(), "agentjet.owner.pidns": pidNamespace(), "agentjet.owner.pid": String(process.pid) };
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

let reaped: Promise<string[]> | undefined;

/**
 * Removes, once per process, the containers that agentjet processes on this host (same host name and
 * pid namespace) made and left behind when they died: instances, spares and netns holders. Gives their
 * names. Never fails: without an engine there is nothing to reap.
 */
export function reapOrphanContainers(timeoutMs = 5_000): Promise<string[]> {
  reaped ??= (async () => {
    const docker = dockerClient();
    const own = ownerLabels();
    const listed = await docker.listContainers({ all: true, filters: { label: [`agentjet.owner.host=${own["agentjet.owner.host"]}`] } });
    const orphans = listed.filter((c) => {
      if (c.Labels["agentjet.owner.pidns"] !== own["agentjet.owner.pidns"]) return false;
      const pid = Number(c.Labels["agentjet.owner.pid"]);
      return Number.isInteger(pid) && pid > 0 && pid !== process.pid && !running(pid);
    });
    await Promise.all(orphans.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
    return orphans.map((c) => (c.Names[0] ?? c.Id).replace(/^\//, ""));
  })().catch(() => []);
  // An engine that does not answer delays no start: the reaping goes on behind it.
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string[]>((resolve) => {
    timer = setTimeout(() => resolve([]), timeoutMs);
    timer.unref();
  });
  return Promise.race([reaped, late]).finally(() => clearTimeout(timer));
}

/** Forgets that this process reaped already (tests). */
export function resetReaped(): void {
  reaped = undefined;
}
