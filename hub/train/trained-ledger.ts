import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import { TrainError } from "./errors.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS trained_episodes (
  policy TEXT NOT NULL,
  episode_id TEXT NOT NULL,
  step INTEGER NOT NULL,
  PRIMARY KEY (policy, episode_id)
);`;

/**
 * Which episodes each policy has trained on, in run.db. The primary key makes training an episode twice
 * (across a stop and `--resume` too) an error instead of a silent repeat.
 */
export class TrainedLedger {
  readonly #insert;
  readonly #count;
  readonly #rewind;

  constructor(db: Database.Database) {
    db.exec(SCHEMA);
    const insert = db.prepare("INSERT INTO trained_episodes (policy, episode_id, step) VALUES (?, ?, ?)");
    this.#insert = db.transaction((policy: string, step: number, ids: readonly string[]) => {
      for (const id of ids) insert.run(policy, id, step);
    });
    this.#rewind = db.prepare<[number]>("DELETE FROM trained_episodes WHERE step > ?");
    this.#count = db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM trained_episodes WHERE policy = ?");
  }

  record(policy: string, step: number, episodeIds: readonly string[]): void {
    try {
      this.#insert(policy, step, episodeIds);
    } catch (err) {
      throw new TrainError("AJ_ERR_TRAIN_TRAINED_TWICE", `policy '${policy}' step ${step}: an episode was already trained on: ${String(err)}`, { cause: err });
    }
  }

  /**
   * Forgets what steps after `step` trained: a crashed session's steps past its last checkpoint, whose
   * weights were discarded, so that the ledger is the lineage of the weights the run continues from.
   */
  rewindTo(step: number): number {
    return this.#rewind.run(step).changes;
  }

  count(policy: string): number {
    return this.#count.get(policy)?.n ?? 0;
  }
}

/**
 * The groups (the scheduler's group ids, `episodes.metadata.groupId`) whose episodes a run's ledger
 * lists as trained at or before `step`: those the weights of that step's checkpoint learned from.
 */
export function groupsTrainedBy(runDbPath: string, step: number): Set<string> {
  if (!existsSync(runDbPath)) return new Set();
  const db = new Database(runDbPath, { readonly: true, fileMustExist: true });
  try {
    const ledger = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'trained_episodes'").get();
    if (!ledger) return new Set();
    const rows = db
      .prepare(
        `SELECT DISTINCT json_extract(e.metadata, '$.groupId') AS g FROM trained_episodes t JOIN episodes e ON e.episode_id = t.episode_id
         WHERE t.step <= ? AND e.metadata IS NOT NULL`,
      )
      .all(step) as Array<{ g: unknown }>;
    return new Set(rows.flatMap((r) => (typeof r.g === "string" ? [r.g] : [])));
  } finally {
    db.close();
  }
}
