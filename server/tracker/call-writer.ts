import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { RunDb } from "../db/run-db.ts";
import { INSERT_CALL, toCallRow } from "./call-rows.ts";
import { isLargeCall, type PackedBatch, packCalls, packCallsSliced, WireMemory } from "./call-wire.ts";
import type { TrackedCall } from "./call-record.ts";
import { bundleWorkerSync } from "../worker-bundle.ts";
import { RecordingFailedError } from "./errors.ts";
import type { WriterMessage, WriterThreadData } from "./writer-thread.ts";

/** Writes batches of calls to `calls`. */
export interface CallWriter {
  /** Hands a batch over; on a file database it is committed on the writer thread, later. */
  write(calls: TrackedCall[]): void;
  /** The episode has no more calls to write (it ended or was discarded): what was kept to write its repeats can go. */
  forget(episodeId: string): void;
  /** Returns once every batch handed over is committed; throws what made one fail. */
  sync(): void;
  /** Syncs, then closes its connection on the writer thread (the thread stays, for the next tracker). */
  close(): void;
}

/** How long `sync` waits for the writer thread before it says the thread is gone. */
const SYNC_TIMEOUT_MS = 60_000;

const require = createRequire(import.meta.url);
const WORKER_SOURCES = ["./writer-thread.ts", "./call-wire.ts", "./call-rows.ts"].map((p) => fileURLToPath(new URL(p, import.meta.url)));

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
  const writeAll = db.transaction((calls: readonly TrackedCall[]) => {
    for (const call of calls) insert.run(toCallRow(call));
  });
  return {
    write(calls) {
      if (db.open) writeAll(calls);
    },
    forget() {},
    sync() {},
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
  const queue: Array<Generator<void, PackedBatch, void>> = [];
  let stepping: NodeJS.Immediate | null = null;

  const post = (packed: PackedBatch): void => {
    if (worker === null) {
      worker = writerThread();
      const open: WriterMessage = { kind: "open", db: id, path: db.name, state, failure };
      worker.postMessage(open);
    }
    sent += 1;
    const message: WriterMessage = { kind: "batch", db: id, batch: packed.batch };
    worker.postMessage(message, packed.transfer);
  };
  /** One slice of the oldest batch being packed, then the event loop's turn. */
  const step = (): void => {
    stepping = null;
    const job = queue[0];
    if (job === undefined) return;
    const r = job.next();
    if (r.done) {
      queue.shift();
      post(r.value);
    }
    if (queue.length > 0) stepping = setImmediate(step).unref();
  };
  /** Packs `calls` (and the episodes to forget after them) now, or behind the batches still being packed. */
  const hand = (calls: readonly TrackedCall[], forget: string[]): void => {
    if (queue.length === 0 && !calls.some(isLargeCall)) {
      post(packCalls(calls, memory, forget));
      return;
    }
    queue.push(packCallsSliced(calls, memory, forget));
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
    for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
      let r = job.next();
      while (!r.done) r = job.next();
      post(r.value);
    }
    waitHandled();
    check();
  };
  return {
    write(calls) {
      check();
      hand(calls, []);
    },
    forget(episodeId) {
      // in order: batches still being packed may repeat what the episode sent
      if (worker !== null || queue.length > 0) hand([], [episodeId]);
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
