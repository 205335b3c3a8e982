import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";
import type BetterSqlite3 from "better-sqlite3";
import { INSERT_CALL, type RowCall, toCallRow } from "./call-rows.ts";

/** What the tracker hands its writer thread: the database file and the shared progress words. */
export interface WriterThreadData {
  path: string;
  /** better-sqlite3's entry, resolved by the parent (the bundled thread lives in the temp folder). */
  sqlite: string;
  /** [0]: the last batch committed (or failed), [1]: 1 once a batch failed. */
  state: Int32Array;
  /** The first failure's message, UTF-8, NUL-padded. */
  failure: Uint8Array;
}

export interface WriterBatch {
  seq: number;
  calls: readonly RowCall[];
}

const { path, sqlite, state, failure } = workerData as WriterThreadData;

function fail(err: unknown): void {
  if (Atomics.load(state, 1) === 0) failure.set(new TextEncoder().encode(String(err instanceof Error ? err.message : err)).subarray(0, failure.length));
  Atomics.store(state, 1, 1);
}

let writeAll: ((calls: readonly RowCall[]) => void) | null = null;
try {
  // Its own connection to the run's file; the tracker's opened it first (WAL, schema).
  const Database = createRequire(import.meta.url)(sqlite) as typeof BetterSqlite3;
  const db = new Database(path);
  db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 5000");
  const insert = db.prepare(INSERT_CALL);
  writeAll = db.transaction((calls: readonly RowCall[]) => {
    for (const call of calls) insert.run(toCallRow(call));
  });
} catch (err) {
  fail(err);
}

parentPort!.on("message", (batch: WriterBatch) => {
  try {
    if (writeAll !== null && Atomics.load(state, 1) === 0) writeAll(batch.calls);
  } catch (err) {
    fail(err);
  }
  Atomics.store(state, 0, batch.seq);
  Atomics.notify(state, 0);
});
