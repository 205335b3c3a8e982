import type { FailureKind } from "../../sdk/failure-kinds.ts";
import { type EpisodeRow, UPSERT_EPISODE } from "../db/episode-row.ts";
import type { RunDb } from "../db/run-db.ts";
import type { AbortReason, Episode, EpisodeState } from "./episode.ts";
import { EpisodeStorageError } from "./errors.ts";

/** Episodes in `run.db` (table `episodes`): every transition is written; finished ones are read back from here. */
export interface EpisodeRows {
  /** Writes the episode's row (insert or update). */
  save(e: Episode): void;
  /** A persisted episode (no client id, activity or sampling seed: those die with their process). */
  load(episodeId: string): Episode | undefined;
  /** The persisted state of an episode, without decoding its row. */
  stateOf(episodeId: string): EpisodeState | undefined;
  /** Resolves once the episode's newest row is in run.db (at once in memory); rejects with what made the write fail. */
  persisted(episodeId: string): Promise<void>;
}

export type { EpisodeRow } from "../db/episode-row.ts";

const RESTARTED: AbortReason = { kind: "server-restart" satisfies FailureKind, message: "the server restarted while the episode was open" };

/** Storage failures are nobody's expected outcome: they throw `EpisodeStorageError`. */
function guarded<T>(action: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw new EpisodeStorageError(action, err);
  }
}

function toRow(e: Episode): EpisodeRow {
  return {
    episode_id: e.episodeId,
    task_id: e.taskId,
    env: e.env,
    state: e.state,
    agents: JSON.stringify(e.agents),
    attempt: e.attempt,
    eval: e.eval ? 1 : 0,
    created_at: e.createdAt,
    claimed_at: e.claimedAt,
    ended_at: e.endedAt,
    rewards: e.rewards === null ? null : JSON.stringify(e.rewards),
    metadata: JSON.stringify(e.metadata),
    abort_reason: e.abortReason === null ? null : JSON.stringify(e.abortReason),
  };
}

/** A row of `episodes` back into the episode (the dashboard and MCP tools read finished ones this way too). */
export function episodeFromRow(r: EpisodeRow): Episode {
  return {
    episodeId: r.episode_id,
    taskId: r.task_id,
    env: r.env,
    eval: r.eval === 1,
    state: r.state,
    agents: JSON.parse(r.agents) as Episode["agents"],
    attempt: r.attempt,
    clientId: null,
    createdAt: r.created_at,
    claimedAt: r.claimed_at,
    lastActivityAt: null,
    endedAt: r.ended_at,
    rewards: r.rewards === null ? null : (JSON.parse(r.rewards) as Record<string, number>),
    metadata: r.metadata === null ? {} : (JSON.parse(r.metadata) as Record<string, unknown>),
    abortReason: r.abort_reason === null ? null : (JSON.parse(r.abort_reason) as AbortReason),
    samplingSeed: null,
  };
}

/**
 * Where a file's episode rows are written off the event loop (the tracker's batches, `Tracker.persistEpisode`):
 * `done` is called once the row is in run.db, or with what made the write fail.
 */
export type PersistEpisodeRow = (row: EpisodeRow, done: (err?: unknown) => void) => void;

/** A file's row handed over and not yet committed, and its promise. */
interface Unsaved {
  row: EpisodeRow;
  promise: Promise<void>;
}

/**
 * Opens the episode rows of `db`. Episodes a previous process left open are aborted first
 * (`server-restart`, at `at`): their keys' claims died with it, so they cannot continue.
 *
 * With `persist` (a file), a transition's row is handed to the writer thread with the calls rather than
 * written on the event loop: a write there took 60 us at best and, when the writer thread held run.db's
 * write lock, SQLite's busy handler slept for a millisecond or more, the event loop with it (p99 4.7 ms
 * under load, `bench/proxy.bench.ts`). Until it is committed, the row is read from memory, and
 * `onPersisted` is called once it is (readers of run.db, such as the dashboard's list, may look again).
 * Without it (in memory), each row is written in place, and a failure throws `EpisodeStorageError`.
 */
export function openEpisodeRows(db: RunDb, at: number, persist?: PersistEpisodeRow, onPersisted?: () => void): EpisodeRows {
  return guarded("open the episodes table", () => {
    db.prepare(`UPDATE episodes SET state = 'aborted', abort_reason = ?, ended_at = ? WHERE state IN ('registered', 'claimed')`).run(
      JSON.stringify(RESTARTED),
      at,
    );
    const upsert = db.prepare<[EpisodeRow]>(UPSERT_EPISODE);
    const selectOne = db.prepare<[string], EpisodeRow>("SELECT * FROM episodes WHERE episode_id = ?");
    const selectState = db.prepare<[string], { state: EpisodeState }>("SELECT state FROM episodes WHERE episode_id = ?");
    /**
     * Rows handed to the writer thread and not yet known to be committed, by episode: the newest of each
     * (batches commit in order, so its promise covers the older ones). A row whose write failed stays.
     */
    const unsaved = new Map<string, Unsaved>();
    const save = (e: Episode): void => {
      const row = toRow(e);
      if (persist === undefined) return guarded(`save episode '${e.episodeId}'`, () => void upsert.run(row));
      let finish: (err?: unknown) => void = () => {};
      const promise = new Promise<void>((resolve, reject) => {
        finish = (err) => (err === undefined ? resolve() : reject(new EpisodeStorageError(`save episode '${e.episodeId}'`, err)));
      });
      // a failure is for whoever waits on `persisted`; with none, the tracker's next flush reports it
      promise.catch(() => {});
      const entry: Unsaved = { row, promise };
      unsaved.set(e.episodeId, entry);
      persist(row, (err) => {
        if (err === undefined && unsaved.get(e.episodeId) === entry) unsaved.delete(e.episodeId);
        finish(err);
        if (err === undefined) onPersisted?.();
      });
    };
    return {
      save,
      load(episodeId) {
        const row = unsaved.get(episodeId)?.row ?? guarded(`read episode '${episodeId}'`, () => selectOne.get(episodeId));
        return row === undefined ? undefined : episodeFromRow(row);
      },
      stateOf: (episodeId) => unsaved.get(episodeId)?.row.state ?? guarded(`read episode '${episodeId}'`, () => selectState.get(episodeId)?.state),
      persisted: (episodeId) => unsaved.get(episodeId)?.promise ?? Promise.resolve(),
    };
  });
}
