import { availableParallelism } from "node:os";
import { Piscina } from "piscina";
import { resolveWorkerFile } from "./worker-file.ts";

/** One piscina pool per process hosts the isolates of every vm environment; it lives while any of them is open. */
let shared: { pool: Promise<Piscina>; users: number } | undefined;

export function acquirePool(): Promise<Piscina> {
  if (!shared) {
    shared = {
      users: 0,
      pool: resolveWorkerFile().then(
        (filename) =>
          new Piscina({
            filename,
            minThreads: 1,
            maxThreads: Math.max(1, Math.min(4, availableParallelism())),
            // A worker hosts live instances between tasks, so it must never be reaped as idle (that killed
            // them mid-episode); the most a timer takes (about 24.8 days) stands for never.
            idleTimeout: 2_147_483_647,
            // Workers must keep their event loop running between tasks: instances are served on ports.
            atomics: "disabled",
          }),
      ),
    };
  }
  shared.users++;
  return shared.pool;
}

export async function releasePool(): Promise<void> {
  if (!shared) return;
  shared.users--;
  if (shared.users > 0) return;
  const { pool } = shared;
  shared = undefined;
  await (await pool).destroy();
}
