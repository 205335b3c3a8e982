import { availableParallelism } from "node:os";
import { resolveHostFile } from "./host-file.ts";
import { VmHostProcess } from "./vm-host-process.ts";

const MAX_HOSTS = Math.max(1, Math.min(4, availableParallelism()));

/**
 * The host processes of every vm environment in this process, started as instances need them (up to
 * one per CPU, at most 4). A host that dies leaves the pool: the next start gets a fresh one.
 */
export class VmPool {
  readonly #file: string;
  readonly #hosts: VmHostProcess[] = [];

  constructor(file: string) {
    this.#file = file;
  }

  /** The host for a new instance: the least loaded, or a new one while every host has instances and there is room. */
  host(): VmHostProcess {
    let least: VmHostProcess | undefined;
    for (const h of this.#hosts) if (!least || h.load < least.load) least = h;
    if (least && (least.load === 0 || this.#hosts.length >= MAX_HOSTS)) return least;
    const host = new VmHostProcess(this.#file, (dead) => {
      const i = this.#hosts.indexOf(dead);
      if (i >= 0) this.#hosts.splice(i, 1);
    });
    this.#hosts.push(host);
    return host;
  }

  async close(): Promise<void> {
    await Promise.all(this.#hosts.map((h) => h.kill()));
  }
}

/** One pool per process; it lives while any vm environment is open. */
let shared: { pool: Promise<VmPool>; users: number } | undefined;

export function acquirePool(): Promise<VmPool> {
  shared ??= { users: 0, pool: resolveHostFile().then((file) => new VmPool(file)) };
  shared.users++;
  return shared.pool;
}

export async function releasePool(): Promise<void> {
  if (!shared) return;
  shared.users--;
  if (shared.users > 0) return;
  const { pool } = shared;
  shared = undefined;
  await (await pool).close();
}
