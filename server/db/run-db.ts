import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";

export type RunDb = Database.Database;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS episodes (
  episode_id   TEXT PRIMARY KEY,
  task_id      TEXT NOT NULL,
  env          TEXT NOT NULL,
  state        TEXT NOT NULL,
  agents       TEXT NOT NULL,
  attempt      INTEGER NOT NULL,
  eval         INTEGER NOT NULL,
  created_at   INTEGER NOT NULL,
  claimed_at   INTEGER,
  ended_at     INTEGER,
  rewards      TEXT,
  metadata     TEXT,
  abort_reason TEXT
);
CREATE TABLE IF NOT EXISTS calls (
  call_id         TEXT PRIMARY KEY,
  episode_id      TEXT NOT NULL,
  agent_id        TEXT NOT NULL,
  policy          TEXT NOT NULL,
  trainable       INTEGER NOT NULL,
  seq             INTEGER NOT NULL,
  messages        TEXT NOT NULL,
  tools           TEXT,
  segments        TEXT NOT NULL,
  header_ids      TEXT NOT NULL,
  output_ids      TEXT NOT NULL,
  output_logprobs TEXT NOT NULL,
  output_text     TEXT NOT NULL,
  finish_reason   TEXT NOT NULL,
  version         INTEGER NOT NULL,
  started_at      INTEGER NOT NULL,
  latency_ms      REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS calls_by_episode ON calls (episode_id, agent_id, seq);
CREATE INDEX IF NOT EXISTS episodes_by_created ON episodes (created_at, episode_id);
CREATE INDEX IF NOT EXISTS episodes_by_state ON episodes (state, env, created_at);
-- the newest episodes of one state, walked newest first (the dashboard's failures: the latest aborted
-- ones that are not cancellations, read until enough are found rather than all of them sorted)
CREATE INDEX IF NOT EXISTS episodes_by_state_time ON episodes (state, created_at);
`;

/**
 * Opens (or creates) the run's SQLite database in WAL mode with the server's tables. Other parts (the
 * training path) add their own tables to the same file with `CREATE TABLE IF NOT EXISTS`.
 */
export function openRunDb(path: string): RunDb {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  // WAL with NORMAL survives a process crash; only an OS crash may lose the last transactions.
  db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 5000");
  db.exec(SCHEMA);
  return db;
}
