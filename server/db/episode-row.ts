/** A row of `episodes` as SQLite returns it (`SELECT *`), and as an episode's transition writes it. */
export interface EpisodeRow {
  episode_id: string;
  task_id: string;
  env: string;
  state: "registered" | "claimed" | "ended" | "aborted";
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

/**
 * Writes an episode's row (insert, or update what a transition changes), with the row's named values: on
 * the event loop's connection (an in-memory database) or on the writer thread's, in a batch.
 */
export const UPSERT_EPISODE = `INSERT INTO episodes (episode_id, task_id, env, state, agents, attempt, eval, created_at, claimed_at, ended_at,
         rewards, metadata, abort_reason)
       VALUES (@episode_id, @task_id, @env, @state, @agents, @attempt, @eval, @created_at, @claimed_at, @ended_at,
         @rewards, @metadata, @abort_reason)
       ON CONFLICT (episode_id) DO UPDATE SET state = excluded.state, attempt = excluded.attempt,
         claimed_at = excluded.claimed_at, ended_at = excluded.ended_at, rewards = excluded.rewards,
         metadata = excluded.metadata, abort_reason = excluded.abort_reason`;
