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
  latency_ms      REAL NOT NULL,
  messages_from   INTEGER NOT NULL DEFAULT 0,
  segments_from   INTEGER NOT NULL DEFAULT 0,
  tools_repeated  INTEGER NOT NULL DEFAULT 0,
  prompt_tokens   INTEGER
);
CREATE INDEX IF NOT EXISTS calls_by_episode ON calls (episode_id, agent_id, seq);
CREATE INDEX IF NOT EXISTS episodes_by_created ON episodes (created_at, episode_id);
CREATE INDEX IF NOT EXISTS episodes_by_state ON episodes (state, env, created_at);
-- the newest episodes of one state, walked newest first (the dashboard's failures: the latest aborted
-- ones that are not cancellations, read until enough are found rather than all of them sorted)
CREATE INDEX IF NOT EXISTS episodes_by_state_time ON episodes (state, created_at);
`;

/**
 * Columns added to \`calls\` since its first release, with their definitions: a row leaves out what repeats
 * its agent's previous call (\`messages_from\` leading messages, \`segments_from\` leading segments, the
 * tools when \`tools_repeated\`; see server/tracker/call-rows.ts), and counts its prompt's tokens. A file
 * written before them gets them on open; its rows read as whole, their prompt counted from the segments.
 */
const ADDED_CALL_COLUMNS: ReadonlyArray<[string, string]> = [
  ["messages_from", "INTEGER NOT NULL DEFAULT 0"],
  ["segments_from", "INTEGER NOT NULL DEFAULT 0"],
  ["tools_repeated", "INTEGER NOT NULL DEFAULT 0"],
  ["prompt_tokens", "INTEGER"],
];

const callColumns = (db: RunDb): Set<string> => new Set((db.prepare("SELECT name FROM pragma_table_info('calls')").all() as Array<{ name: string }>).map((c) => c.name));

function addMissingColumns(db: RunDb): void {
  const have = callColumns(db);
  for (const [name, definition] of ADDED_CALL_COLUMNS) if (!have.has(name)) db.exec(`ALTER TABLE calls ADD COLUMN ${name} ${definition}`);
}

/** A row's prompt tokens counted from its ids (rows written before `prompt_tokens`, whose segments are all there). */
const COUNTED_PROMPT_TOKENS = "json_array_length(header_ids) + (SELECT COALESCE(SUM(json_array_length(value, '$.ids')), 0) FROM json_each(segments))";

/**
 * SQL expressions over a \`calls\` row, for readers that query run.db themselves: its prompt's tokens, and
 * how many leading messages it leaves out (its agent's previous call's). A file from before those columns
 * (opened read-only, so not given them) counts the prompt from its ids and leaves nothing out.
 */
export function callRowSql(db: RunDb): { promptTokens: string; messagesFrom: string } {
  return callColumns(db).has("prompt_tokens")
    ? { promptTokens: `COALESCE(prompt_tokens, ${COUNTED_PROMPT_TOKENS})`, messagesFrom: "messages_from" }
    : { promptTokens: COUNTED_PROMPT_TOKENS, messagesFrom: "0" };
}

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
  addMissingColumns(db);
  return db;
}
