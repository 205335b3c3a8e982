import type { FailureKind } from "../../sdk/failure-kinds.ts";
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
}

/** A row of `episodes` as SQLite returns it (`SELECT *`). */
export interface EpisodeRow {
  episode_id: string;
  task_id: string;
  env: string;
  state: EpisodeState;
  agents: string;
  attempt: number;
  eval: number;
  created_at: number;
  claimed_at: number | null;
  ended_at: number | null;
  rewards: string | null;
  metadata: string | null;
  abort_reason: string | null;
}

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
 * Opens the episode rows of `db`. Episodes a previous process left open are aborted first
 * (`server-restart`, at `at`): their keys' claims died with it, so they cannot continue.
 */
export function openEpisodeRows(db: RunDb, at: number): EpisodeRows {
  return guarded("open the episodes table", () => {
    db.prepare(`UPDATE episodes SET state = 'aborted', abort_reason = ?, ended_at = ? WHERE state IN ('registered', 'claimed')`).run(
      JSON.stringify(RESTARTED),
      at,
    );
    const upsert = db.prepare<[EpisodeRow]>(
      `INSERT INTO episodes (episode_id, task_id, env, state, agents, attempt, eval, created_at, claimed_at, ended_at,
         rewards, metadata, abort_reason)
       VALUES (@episode_id, @task_id, @env, @state, @agents, @attempt, @eval, @created_at, @claimed_at, @ended_at,
         @rewards, @metadata, @abort_reason)
       ON CONFLICT (episode_id) DO UPDATE SET state = excluded.state, attempt = excluded.attempt,
         claimed_at = excluded.claimed_at, ended_at = excluded.ended_at, rewards = excluded.rewards,
         metadata = excluded.metadata, abort_reason = excluded.abort_reason`,
    );
    const selectOne = db.prepare<[string], EpisodeRow>("SELECT * FROM episodes WHERE episode_id = ?");
    const selectState = db.prepare<[string], { state: EpisodeState }>("SELECT state FROM episodes WHERE episode_id = ?");
    return {
      save: (e) => guarded(`save episode '${e.episodeId}'`, () => void upsert.run(toRow(e))),
      load(episodeId) {
        const row = guarded(`read episode '${episodeId}'`, () => selectOne.get(episodeId));
        return row === undefined ? undefined : episodeFromRow(row);
      },
      stateOf: (episodeId) => guarded(`read episode '${episodeId}'`, () => selectState.get(episodeId)?.state),
    };
  });
}
