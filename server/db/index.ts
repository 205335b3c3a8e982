/** `run.db`: one SQLite file per run (better-sqlite3). */
export { callRowSql, openRunDb, type RunDb } from "./run-db.ts";
