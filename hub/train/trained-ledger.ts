import type { Database } from "better-sqlite3";
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

  constructor(db: Database) {
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
