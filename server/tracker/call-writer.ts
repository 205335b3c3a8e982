import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { RunDb } from "../db/run-db.ts";
import { INSERT_CALL, type RowCall, toCallRow } from "./call-rows.ts";
import type { TrackedCall } from "./call-record.ts";
import { bundleWorkerSync } from "../worker-bundle.ts";
import { RecordingFailedError } from "./errors.ts";
import type { WriterBatch, WriterThreadData } from "./writer-thread.ts";

/** Writes batches of calls to `calls`. */
export interface CallWriter {
  /** Hands a batch over; on a file database it is committed on the writer thread, later. */
  write(calls: TrackedCall[]): void;
  /** Returns once every batch handed over is committed; throws what made one fail. */
  sync(): void;
  /** Syncs, then stops the writer thread. */
  close(): void;
}

/** How long `sync` waits for the writer thread before it says the thread is gone. */
const SYNC_TIMEOUT_MS = 60_000;

const require = createRequire(import.meta.url);
const WORKER_SOURCES = ["./writer-thread.ts", "./call-rows.ts"].map((p) => fileURLToPath(new URL(p, import.meta.url)));

/** The writer thread's bundle; it loads better-sqlite3 by the path it is given (see server/worker-bundle.ts). */
function writerFile(): string {
  return bundleWorkerSync({ name: "call-writer", sources: WORKER_SOURCES });
}

/** Segments of at least this many ids cross to the writer thread as a moved Int32Array. */
const MOVE_IDS_FROM = 16_384;

/**
 * The calls as they cross to the writer thread. A structured clone copies a number array element by
 * element (a 4 MB message's million ids held the event loop for tens of ms); a long segment's ids are
 * copied once into an Int32Array whose buffer is moved instead. The calls the tracker keeps are not touched.
 */
function packLongSegments(calls: TrackedCall[]): { wire: RowCall[]; transfer: ArrayBuffer[] } {
  const transfer: ArrayBuffer[] = [];
  const wire = calls.map((call) => {
    if (!call.segments.some((s) => s.ids.length >= MOVE_IDS_FROM)) return call;
    const segments = call.segments.map((s) => {
      if (s.ids.length < MOVE_IDS_FROM) return s;
      const ids = new Int32Array(s.ids);
      transfer.push(ids.buffer);
      return { ...s, ids };
    });
    return { ...call, segments };
  });
  return { wire, transfer };
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
    sync() {},
    close() {},
  };
}

/**
 * The writer for the run's database: on a file, a thread with its own connection commits each batch, so
 * serializing and inserting calls leaves the event loop; an in-memory database (tests) is written in
 * place. The thread starts with the first batch and never keeps the process alive.
 */
export function createCallWriter(db: RunDb): CallWriter {
  if (db.memory || db.readonly) return inThreadWriter(db);
  const state = new Int32Array(new SharedArrayBuffer(8));
  const failure = new Uint8Array(new SharedArrayBuffer(1024));
  let worker: Worker | null = null;
  let sent = 0;

  const check = (): void => {
    if (Atomics.load(state, 1) === 0) return;
    const message = new TextDecoder().decode(failure).replace(/\0+$/, "");
    throw new RecordingFailedError(`recording calls to ${db.name} failed: ${message}`);
  };
  const sync = (): void => {
    const deadline = Date.now() + SYNC_TIMEOUT_MS;
    for (let done = Atomics.load(state, 0); done < sent; done = Atomics.load(state, 0)) {
      if (Date.now() > deadline) throw new RecordingFailedError(`recording calls to ${db.name}: the writer thread did not answer in ${SYNC_TIMEOUT_MS} ms`);
      Atomics.wait(state, 0, done, 1000);
    }
    check();
  };
  return {
    write(calls) {
      check();
      if (worker === null) {
        const data: WriterThreadData = { path: db.name, sqlite: require.resolve("better-sqlite3"), state, failure };
        worker = new Worker(writerFile(), { workerData: data });
        worker.unref();
      }
      sent += 1;
      // The calls cross as they are (a structured clone: about a third of JSON.stringify's cost on the
      // event loop), long segments' ids in moved buffers; the writer thread makes the rows' JSON.
      const { wire, transfer } = packLongSegments(calls);
      const batch: WriterBatch = { seq: sent, calls: wire };
      worker.postMessage(batch, transfer);
    },
    sync,
    close() {
      if (worker === null) return;
      try {
        sync();
      } finally {
        void worker.terminate();
        worker = null;
      }
    },
  };
}
