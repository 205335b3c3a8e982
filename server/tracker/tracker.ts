import type { RunDb } from "../db/run-db.ts";
import type { CallRecord, TrackedCall } from "./call-record.ts";
import { type CallRow, fromCallRow } from "./call-rows.ts";
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
  /** Drops the in-memory copy of a finished episode; the database keeps it. */
  release(episodeId: string): void;
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

export function createTracker(db: RunDb): Tracker {
  const live = new Map<string, Map<string, LiveAgent>>();
  const selectEpisode = db.prepare<[string], CallRow>("SELECT * FROM calls WHERE episode_id = ? ORDER BY agent_id, seq");
  const deleteEpisode = db.prepare<[string]>("DELETE FROM calls WHERE episode_id = ?");
  // Calls are written in batches off the response's path: one transaction every FLUSH_MS (or at
  // FLUSH_CALLS pending calls), committed on the writer thread (a file database; `call-writer.ts`), so
  // serializing and inserting them costs the event loop only the hand-over. At once, and waited for, when
  // an episode ends or is discarded, and on close. A live episode's calls are read from memory, so a batch never delays a reader. Crash safety:
  // what a crash can lose is the last FLUSH_MS of calls plus a batch being committed, and only of
  // episodes still live (an ended episode's calls are committed before its end is answered); a restarted
  // run re-runs live episodes rather than resuming them, so those calls were not needed.
  const writer = createCallWriter(db);
  let pending: TrackedCall[] = [];
  let timer: NodeJS.Timeout | null = null;
  const send = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (pending.length === 0 || !db.open) return;
    const calls = pending;
    pending = [];
    writer.write(calls);
  };
  const flush = (): void => {
    send();
    writer.sync();
  };

  const callsOf = (episodeId: string): TrackedCall[] => {
    const mem = live.get(episodeId);
    // An episode leaves memory only through release or discard, both of which flush first: its calls
    // are committed, and reading them needs no wait for the writer thread (the first call of every new
    // episode reads here).
    if (!mem) return selectEpisode.all(episodeId).map(fromCallRow);
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
      if (pending.length >= FLUSH_CALLS) send();
      else if (timer === null) {
        timer = setTimeout(send, FLUSH_MS);
        // an idle process is not kept alive for a batch: close and the episode's end flush it
        timer.unref();
      }
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
      flush();
      live.delete(episodeId);
      writer.forget(episodeId);
    },
    flush,
    close() {
      flush();
      writer.close();
    },
  };
}
