import type { EpisodeRow } from "../db/episode-row.ts";
import type { RunDb } from "../db/run-db.ts";
import type { CallRecord, TrackedCall } from "./call-record.ts";
import { type CallRow, fromCallRows } from "./read-call-rows.ts";
import { createCallWriter } from "./call-writer.ts";
import { sameJson, shareRepeats } from "./repeats.ts";

export type { TrackedCall } from "./call-record.ts";

/**
 * The context tracker: every call of every episode, written to `run.db` as it happens and kept in memory
 * while its episode is live (the next call's splicing and the end-of-episode event read it there).
 */
export interface Tracker {
  record(call: TrackedCall): void;
  /** Calls of a live episode (memory), else from the database; in (agent, seq) order. */
  callsOf(episodeId: string): TrackedCall[];
  /** Calls of one (episode, agent), in seq order. */
  callsOfAgent(episodeId: string, agentId: string): readonly TrackedCall[];
  /**
   * The generations of one live (episode, agent) for splicing: canonical output text -> header + output
   * ids. Overflowed calls generated nothing and are left out.
   */
  generationsOf(episodeId: string, agentId: string): ReadonlyMap<string, readonly number[]>;
  /** Forgets and deletes an episode's calls (idle reclaim discards a partial record). */
  discard(episodeId: string): void;
  /**
   * Drops the in-memory copy of a finished episode; the database keeps it. On a file its calls are
   * committed soon after (`committed`), and read from memory until then; in memory, at once.
   */
  release(episodeId: string): void;
  /** Resolves once a released episode's calls are committed (at once for any other); rejects with what made the write fail. */
  committed(episodeId: string): Promise<void>;
  /** Whether run.db is written later, on the writer thread (a file), rather than in place (in memory). */
  readonly deferred: boolean;
  /**
   * Writes an episode's row on the writer thread (`deferred` only), with what calls are pending, as soon
   * as the thread is free: `done` is called once it is in run.db, or with what made the write fail.
   */
  persistEpisode(row: EpisodeRow, done: (err?: unknown) => void): void;
  /** Writes pending records now and returns once they are committed (they are otherwise written in batches, every FLUSH_MS). */
  flush(): void;
  /** Flushes, then stops the writer thread (the store's close, before the database closes). */
  close(): void;
}

interface LiveAgent {
  calls: TrackedCall[];
  generations: Map<string, readonly number[]>;
}

/** How long a recorded call may wait to be written, and how many may wait. */
const FLUSH_MS = 100;
const FLUSH_CALLS = 512;

const NO_GENERATIONS: ReadonlyMap<string, readonly number[]> = new Map();

/**
 * `onBackgroundError`: a write failure found by a hand-over of the batch timer or of an episode's end
 * (no request to answer there; thrown, it would crash the process), said once. The next flush, and the
 * end of each episode waiting for a commit, report it too. Default console.error.
 */
export function createTracker(db: RunDb, onBackgroundError: (err: unknown) => void = (err) => console.error(err)): Tracker {
  const live = new Map<string, Map<string, LiveAgent>>();
  const selectEpisode = db.prepare<[string], CallRow>("SELECT * FROM calls WHERE episode_id = ? ORDER BY agent_id, seq");
  const deleteEpisode = db.prepare<[string]>("DELETE FROM calls WHERE episode_id = ?");
  // Calls are written in batches off the response's path: one transaction every FLUSH_MS (or at
  // FLUSH_CALLS pending calls), committed on the writer thread (a file database; `call-writer.ts`), so
  // serializing and inserting them costs the event loop only the hand-over. As soon as the writer thread
  // is free once an episode ends (the end's answer waits for the commit, `committed`, without holding the event loop); at
  // once, and waited for, when an episode is discarded, and on close. A live episode's calls are read from
  // memory, and an ended one's until they are committed, so a batch never delays a reader. Episode rows
  // (`persistEpisode`) go in the same batches. Crash safety: what a crash can lose is the last FLUSH_MS of
  // calls and episode transitions plus a batch being committed, and only of episodes still live (an
  // ended episode's calls and row are committed before its end is answered over HTTP); a restarted run
  // re-runs live episodes rather than resuming them, so those calls were not needed.
  const writer = createCallWriter(db);
  let pending: TrackedCall[] = [];
  /** Episode rows waiting for the next batch, and what to call once each is committed (or failed). */
  let pendingRows: EpisodeRow[] = [];
  let rowsDone: Array<(err?: unknown) => void> = [];
  let timer: NodeJS.Timeout | null = null;
  /**
   * Released episodes whose calls are not yet known to be committed (a file): each stays in `live` (read
   * from memory) until its batch is, and its promise settles then. `ending` are those not yet handed over.
   */
  const settling = new Map<string, { promise: Promise<void>; settle: (err?: unknown) => void }>();
  let ending: string[] = [];
  /** Whether a hand-over of released episodes and episode rows is scheduled (`sendSoon`). */
  let soonScheduled = false;
  /** Hands the pending calls and episode rows over, with the released episodes (their repeats forgotten after them). */
  const send = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    const released = ending;
    ending = [];
    rowsDone = [];
    if ((pending.length > 0 || released.length > 0 || pendingRows.length > 0) && db.open) {
      const calls = pending;
      const rows = pendingRows;
      pending = [];
      pendingRows = [];
      writer.write(calls, released, rows);
    }
  };
  let backgroundErrorSaid = false;
  /** `sendEnded` from a timer or an immediate: a failure goes to `onBackgroundError` (once), not up (nothing would catch it there). */
  const sendInBackground = (): void => {
    try {
      sendEnded();
    } catch (err) {
      if (backgroundErrorSaid) return;
      backgroundErrorSaid = true;
      onBackgroundError(err);
    }
  };
  /** Starts the batch timer, unless one runs. */
  const schedule = (): void => {
    if (timer !== null) return;
    timer = setTimeout(sendInBackground, FLUSH_MS);
    // an idle process is not kept alive for a batch: close and the episode's end hand it over
    timer.unref();
  };
  /** What was handed over is committed (or failed): its rows hear, and released episodes leave memory, their waiters told. */
  const settle = (released: readonly string[], rows: ReadonlyArray<(err?: unknown) => void>, err?: unknown): void => {
    for (const done of rows) done(err);
    for (const episodeId of released) {
      live.delete(episodeId);
      settling.get(episodeId)?.settle(err);
      settling.delete(episodeId);
    }
  };
  /** Hands what is pending over now, and settles released episodes and rows once the writer thread committed them. */
  const sendEnded = (): void => {
    const released = ending;
    const rows = rowsDone;
    try {
      send();
    } catch (err) {
      settle(released, rows, err);
      throw err;
    }
    if (released.length === 0 && rows.length === 0) return;
    writer.committed().then(
      () => settle(released, rows),
      (err: unknown) => settle(released, rows, err),
    );
  };
  /**
   * Hands released episodes and episode rows over as soon as the writer thread is free (group commit): on
   * the next turn when it is idle, else when the batch it is committing is done, with everything released
   * or saved meanwhile. A transition waits for one commit at most, and those that come together share one.
   */
  const sendSoon = (): void => {
    if (soonScheduled) return;
    soonScheduled = true;
    const go = (): void => {
      soonScheduled = false;
      if (ending.length > 0 || pendingRows.length > 0) sendInBackground();
    };
    const next = (): void => void setImmediate(go);
    writer.committed().then(next, next);
  };
  const flush = (): void => {
    const released = ending;
    const rows = rowsDone;
    try {
      send();
      writer.sync();
    } catch (err) {
      settle(released, rows, err);
      throw err;
    }
    // every batch handed over is committed, those of episodes released earlier included
    settle([...settling.keys()], rows);
  };

  const callsOf = (episodeId: string): TrackedCall[] => {
    const mem = live.get(episodeId);
    // An episode leaves memory only once its calls are committed (a release's batch, or discard's
    // flush), so reading them needs no wait for the writer thread (the first call of every new episode
    // reads here).
    if (!mem) return fromCallRows(selectEpisode.all(episodeId));
    return [...mem.keys()].sort().flatMap((agentId) => mem.get(agentId)!.calls);
  };

  return {
    record(call) {
      let episode = live.get(call.episodeId);
      if (!episode) live.set(call.episodeId, (episode = new Map()));
      let agent = episode.get(call.agentId);
      if (!agent) episode.set(call.agentId, (agent = { calls: [], generations: new Map() }));
      // what repeats the agent's previous call is kept as the objects it recorded (see repeats.ts)
      const previous = agent.calls[agent.calls.length - 1];
      if (previous !== undefined) {
        call.messages = shareRepeats(previous.messages, call.messages);
        if (call.tools !== null && previous.tools !== null && call.tools !== previous.tools && sameJson(previous.tools, call.tools)) call.tools = previous.tools;
      }
      agent.calls.push(call);
      if (call.finishReason !== "overflow") agent.generations.set(call.outputText, call.headerIds.concat(call.outputIds));
      pending.push(call);
      if (pending.length >= FLUSH_CALLS) sendEnded();
      else schedule();
    },
    deferred: writer.deferred,
    persistEpisode(row, done) {
      pendingRows.push(row);
      rowsDone.push(done);
      sendSoon();
    },
    callsOf,
    callsOfAgent(episodeId, agentId) {
      const mem = live.get(episodeId);
      if (mem) return mem.get(agentId)?.calls ?? [];
      return callsOf(episodeId).filter((c) => c.agentId === agentId);
    },
    generationsOf(episodeId, agentId) {
      return live.get(episodeId)?.get(agentId)?.generations ?? NO_GENERATIONS;
    },
    discard(episodeId) {
      flush();
      live.delete(episodeId);
      writer.forget(episodeId);
      deleteEpisode.run(episodeId);
    },
    release(episodeId) {
      if (!writer.deferred) {
        flush();
        live.delete(episodeId);
        writer.forget(episodeId);
        return;
      }
      // Not written here and waited for (that held the event loop until the writer thread committed):
      // handed over once the writer thread is free, with what else is pending; read from memory until then.
      if (settling.has(episodeId)) return;
      let settleOne: (err?: unknown) => void = () => {};
      const promise = new Promise<void>((resolve, reject) => {
        settleOne = (err) => (err === undefined ? resolve() : reject(err));
      });
      // a failure is for whoever waits on `committed`; with none, the next flush or record reports it
      promise.catch(() => {});
      settling.set(episodeId, { promise, settle: settleOne });
      ending.push(episodeId);
      sendSoon();
    },
    committed(episodeId) {
      return settling.get(episodeId)?.promise ?? Promise.resolve();
    },
    flush,
    close() {
      flush();
      writer.close();
    },
  };
}
