import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { type EpisodeRow, UPSERT_EPISODE } from "../db/episode-row.ts";
import type { RunDb } from "../db/run-db.ts";
import { INSERT_CALL, LastCalls, toCallRow } from "./call-rows.ts";
import { isLargeCall, type PackedBatch, packCalls, packCallsSliced, WireMemory } from "./call-wire.ts";
import type { TrackedCall } from "./call-record.ts";
import { bundleWorkerSync } from "../worker-bundle.ts";
import { RecordingFailedError } from "./errors.ts";
import type { WriterMessage, WriterThreadData } from "./writer-thread.ts";

/** Writes batches of calls to `calls`, and episode rows to `episodes` with them. */
export interface CallWriter {
  /** Whether batches are committed later, on the writer thread (a file), rather than in `write` (in memory). */
  readonly deferred: boolean;
  /**
   * Hands a batch over; on a file database it is committed on the writer thread, later. `forget`: episodes
   * with no more calls to write after these (ended): what was kept to write their repeats can go.
   * `episodes`: episode rows written in the same transaction, after the calls.
   */
  write(calls: readonly TrackedCall[], forget?: readonly string[], episodes?: readonly EpisodeRow[]): void;
  /** The episode has no more calls to write (it ended or was discarded): what was kept to write its repeats can go. */
  forget(episodeId: string): void;
  /** Returns once every batch handed over is committed; throws what made one fail. */
  sync(): void;
  /**
   * Resolves once every batch handed over so far is committed, without holding the event loop (an
   * episode's end waits here before it is answered); rejects with what made one fail.
   */
  committed(): Promise<void>;
  /** Syncs, then closes its connection on the writer thread (the thread stays, for the next tracker). */
  close(): void;
}

/** `Atomics.waitAsync` (Node 16+; ES2024, past this project's `lib`). */
const waitAsync = (Atomics as unknown as { waitAsync(a: Int32Array, index: number, value: number, timeoutMs: number): { async: boolean; value: unknown } }).waitAsync;

/** How long `sync` waits for the writer thread before it says the thread is gone. */
const SYNC_TIMEOUT_MS = 60_000;

const require = createRequire(import.meta.url);
const WORKER_SOURCES = ["./writer-thread.ts", "./call-wire.ts", "./call-rows.ts", "../db/episode-row.ts", "../tokenizers/prompt-ids.ts"].map((p) => fileURLToPath(new URL(p, import.meta.url)));

/** The writer thread's bundle; it loads better-sqlite3 by the path it is given (see server/worker-bundle.ts). */
function writerFile(): string {
  return bundleWorkerSync({ name: "call-writer", sources: WORKER_SOURCES });
}

/** The process's writer thread, started with the first tracker that writes to a file; idle, it keeps nothing alive. */
let thread: Worker | null = null;
/** Databases opened on it so far (each tracker's connection has its own number). */
let opened = 0;

function writerThread(): Worker {
  if (thread === null) {
    const data: WriterThreadData = { sqlite: require.resolve("better-sqlite3") };
    const worker = new Worker(writerFile(), { workerData: data });
    worker.unref();
    // a thread that stops (it never should) is started again for the next tracker; the trackers that
    // used it find out through `sync` (it no longer answers)
    worker.on("exit", () => {
      if (thread === worker) thread = null;
    });
    thread = worker;
  }
  return thread;
}

function inThreadWriter(db: RunDb): CallWriter {
  const insert = db.prepare(INSERT_CALL);
  const upsert = db.prepare<[EpisodeRow]>(UPSERT_EPISODE);
  const lastCalls = new LastCalls();
  const writeAll = db.transaction((calls: readonly TrackedCall[], episodes: readonly EpisodeRow[]) => {
    for (const call of calls) insert.run(toCallRow(call, lastCalls.next(call)));
    for (const row of episodes) upsert.run(row);
  });
  return {
    deferred: false,
    write(calls, forget = [], episodes = []) {
      if (db.open) writeAll(calls, episodes);
      for (const episodeId of forget) lastCalls.forget(episodeId);
    },
    forget(episodeId) {
      lastCalls.forget(episodeId);
    },
    sync() {},
    committed: () => Promise.resolve(),
    close() {},
  };
}

/**
 * The writer for the run's database: on a file, a thread with its own connection commits each batch, so
 * serializing and inserting calls leaves the event loop; an in-memory database (tests) is written in
 * place. The thread starts with the first batch and never keeps the process alive.
 *
 * A batch crosses packed (`call-wire.ts`): its ids and log-probs in two moved typed arrays, the rest a
 * structured clone; the writer thread makes the rows' JSON. A batch with a large call (a 4 MB message)
 * is packed a slice at a time, a turn of the event loop each, and posted when it is whole; `sync`
 * finishes what is still being packed, in place, before it waits.
 */
export function createCallWriter(db: RunDb): CallWriter {
  if (db.memory || db.readonly) return inThreadWriter(db);
  const state = new Int32Array(new SharedArrayBuffer(8));
  const failure = new Uint8Array(new SharedArrayBuffer(1024));
  const memory = new WireMemory();
  /** This database on the writer thread, once opened there. */
  let worker: Worker | null = null;
  const id = ++opened;
  /** Messages posted about this database (the thread counts those it handled in `state[0]`). */
  let sent = 0;
  /**
   * Batches waiting to be packed and posted, oldest first, while one with a large call is packed a slice
   * at a time: each batch's repeats refer to what the batches before it sent, so they are posted in order.
   */
  const queue: Array<{ job: Generator<void, PackedBatch, void>; episodes: readonly EpisodeRow[] }> = [];
  let stepping: NodeJS.Immediate | null = null;

  const post = (packed: PackedBatch, episodes: readonly EpisodeRow[]): void => {
    if (worker === null) {
      worker = writerThread();
      const open: WriterMessage = { kind: "open", db: id, path: db.name, state, failure };
      worker.postMessage(open);
    }
    sent += 1;
    const message: WriterMessage = { kind: "batch", db: id, batch: packed.batch, episodes };
    worker.postMessage(message, packed.transfer);
  };
  /** One slice of the oldest batch being packed, then the event loop's turn. */
  const step = (): void => {
    stepping = null;
    const oldest = queue[0];
    if (oldest === undefined) return;
    const r = oldest.job.next();
    if (r.done) {
      queue.shift();
      post(r.value, oldest.episodes);
    }
    if (queue.length > 0) stepping = setImmediate(step).unref();
  };
  /** Packs `calls` (and the episodes to forget after them) now, or behind the batches still being packed. */
  const hand = (calls: readonly TrackedCall[], forget: readonly string[], episodes: readonly EpisodeRow[] = []): void => {
    if (queue.length === 0 && !calls.some(isLargeCall)) {
      post(packCalls(calls, memory, forget), episodes);
      return;
    }
    queue.push({ job: packCallsSliced(calls, memory, forget), episodes });
    stepping ??= setImmediate(step).unref();
  };
  const check = (): void => {
    if (Atomics.load(state, 1) === 0) return;
    const message = new TextDecoder().decode(failure).replace(/\0+$/, "");
    throw new RecordingFailedError(`recording calls to ${db.name} failed: ${message}`);
  };
  /** Returns once the thread handled every message posted about this database. */
  const waitHandled = (): void => {
    const deadline = Date.now() + SYNC_TIMEOUT_MS;
    for (let done = Atomics.load(state, 0); done < sent; done = Atomics.load(state, 0)) {
      if (Date.now() > deadline) throw new RecordingFailedError(`recording calls to ${db.name}: the writer thread did not answer in ${SYNC_TIMEOUT_MS} ms`);
      Atomics.wait(state, 0, done, 1000);
    }
  };
  const sync = (): void => {
    for (let oldest = queue.shift(); oldest !== undefined; oldest = queue.shift()) {
      let r = oldest.job.next();
      while (!r.done) r = oldest.job.next();
      post(r.value, oldest.episodes);
    }
    waitHandled();
    check();
  };
  /** Resolves once the thread handled `target` messages about this database, waiting asynchronously. */
  const handledAsync = async (target: number): Promise<void> => {
    const deadline = Date.now() + SYNC_TIMEOUT_MS;
    // a pending Atomics.waitAsync does not keep the process alive; this timer does, for as long as it waits
    const alive = setTimeout(() => {}, SYNC_TIMEOUT_MS);
    try {
      for (let done = Atomics.load(state, 0); done < target; done = Atomics.load(state, 0)) {
        const left = deadline - Date.now();
        if (left <= 0) throw new RecordingFailedError(`recording calls to ${db.name}: the writer thread did not answer in ${SYNC_TIMEOUT_MS} ms`);
        const wait = waitAsync(state, 0, done, Math.min(left, 1000));
        if (wait.async) await wait.value;
      }
    } finally {
      clearTimeout(alive);
    }
    check();
  };
  return {
    deferred: true,
    write(calls, forget = [], episodes = []) {
      check();
      hand(calls, forget, episodes);
    },
    committed() {
      // each batch still being packed is posted as one message, after those already sent
      const target = sent + queue.length;
      if (Atomics.load(state, 0) >= target) {
        try {
          check();
        } catch (err) {
          return Promise.reject(err);
        }
        return Promise.resolve();
      }
      return handledAsync(target);
    },
    forget(episodeId) {
      // in order: batches still being packed may repeat what the episode sent
      if (queue.length > 0) hand([], [episodeId]);
      else memory.forget(episodeId);
    },
    sync,
    close() {
      if (stepping !== null) clearImmediate(stepping);
      stepping = null;
      if (worker === null && queue.length === 0) return;
      let error: unknown = null;
      try {
        sync();
      } catch (err) {
        error = err;
      }
      // the thread closes this database's connection (and stays, for the next tracker)
      if (worker !== null) {
        sent += 1;
        const message: WriterMessage = { kind: "close", db: id };
        worker.postMessage(message);
        worker = null;
        try {
          waitHandled();
        } catch (err) {
          error ??= err;
        }
      }
      if (error !== null) throw error;
    },
  };
}
