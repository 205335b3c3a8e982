import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";
import type BetterSqlite3 from "better-sqlite3";
import { type EpisodeRow, UPSERT_EPISODE } from "../db/episode-row.ts";
import { INSERT_CALL, RowMaker, type WireBatch } from "./call-wire.ts";

/**
 * The writer thread: one per process, started with the first tracker on a file and kept (idle, it keeps
 * nothing alive), so a server started later meets a thread whose code is already compiled. Each tracker's
 * database gets its own connection here, opened when the tracker first writes and closed with it.
 */
export interface WriterThreadData {
  /** better-sqlite3's entry, resolved by the parent (the bundled thread lives in the temp folder). */
  sqlite: string;
}

/** A database's shared progress words: [0] how many of its messages were handled (committed, failed or closed), [1] 1 once a batch failed. */
export interface WriterProgress {
  state: Int32Array;
  /** The first failure's message, UTF-8, NUL-padded. */
  failure: Uint8Array;
}

export type WriterMessage =
  | ({ kind: "open"; db: number; path: string } & WriterProgress)
  | { kind: "batch"; db: number; batch: WireBatch; episodes: readonly EpisodeRow[] }
  | { kind: "close"; db: number };

const { sqlite } = workerData as WriterThreadData;
let Database: typeof BetterSqlite3 | undefined;

interface Connection extends WriterProgress {
  writeAll: ((batch: WireBatch, episodes: readonly EpisodeRow[]) => void) | null;
  close: () => void;
}

const connections = new Map<number, Connection>();

function fail(p: WriterProgress, err: unknown): void {
  if (Atomics.load(p.state, 1) === 0) p.failure.set(new TextEncoder().encode(String(err instanceof Error ? err.message : err)).subarray(0, p.failure.length));
  Atomics.store(p.state, 1, 1);
}

function done(p: WriterProgress): void {
  Atomics.add(p.state, 0, 1);
  Atomics.notify(p.state, 0);
}

function open(m: Extract<WriterMessage, { kind: "open" }>): void {
  const c: Connection = { state: m.state, failure: m.failure, writeAll: null, close: () => {} };
  connections.set(m.db, c);
  try {
    Database ??= createRequire(import.meta.url)(sqlite) as typeof BetterSqlite3;
    // Its own connection to the run's file; the tracker's opened it first (WAL, schema).
    const db = new Database(m.path);
    c.close = () => db.close();
    db.pragma("synchronous = NORMAL");
    db.pragma("busy_timeout = 5000");
    const insert = db.prepare(INSERT_CALL);
    const upsert = db.prepare<[EpisodeRow]>(UPSERT_EPISODE);
    const maker = new RowMaker();
    c.writeAll = db.transaction((batch: WireBatch, episodes: readonly EpisodeRow[]) => {
      // positional arguments bind straight from the call (an array is read back element by element through the V8 API)
      for (const row of maker.rows(batch)) insert.run(...row);
      // episode rows after the calls: an ended episode's row and its calls commit together
      for (const row of episodes) upsert.run(row);
    });
  } catch (err) {
    fail(c, err);
  }
}

parentPort!.on("message", (m: WriterMessage) => {
  if (m.kind === "open") return open(m);
  const c = connections.get(m.db)!;
  if (m.kind === "close") {
    connections.delete(m.db);
    try {
      c.close();
    } catch (err) {
      fail(c, err);
    }
    return done(c);
  }
  try {
    if (c.writeAll !== null && Atomics.load(c.state, 1) === 0) c.writeAll(m.batch, m.episodes);
  } catch (err) {
    fail(c, err);
  }
  done(c);
});
