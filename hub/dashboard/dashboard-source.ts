import { existsSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { PolicyRuntime } from "../../server/app/index.ts";
import type { RunConfig } from "../../server/config/index.ts";
import type { RunDb } from "../../server/db/index.ts";
import type { EpisodeStore } from "../../server/episodes/index.ts";
import type { SamplePool } from "../../server/training/index.ts";
import type { EngineStatus } from "../run/engine-status.ts";
import type { SchedulerStats } from "../scheduler/types.ts";
import type { PreparedEnvironment } from "../train/prepare-environments.ts";
import type { ClientView } from "./client-activity.ts";
import type { LiveFeed } from "./live-feed.ts";

/** The parts of the run that is going that the dashboard reads (never writes). */
export interface LiveRun {
  config: RunConfig;
  db: RunDb;
  store: EpisodeStore;
  policies: ReadonlyMap<string, PolicyRuntime>;
  scheduler: { stats(): SchedulerStats };
  pool: SamplePool;
  envs: readonly PreparedEnvironment[];
}

/** What the dashboard and `/metrics` are served from: the training service (hub/run/service.ts). */
export interface DashboardSource {
  status(): EngineStatus;
  /** The run config set on the service, if any. */
  config(): RunConfig | null;
  /** The run that is going; null while offline or booting. */
  run(): LiveRun | null;
  /** The current or last run's directory (where run.db and metrics.jsonl are). */
  runDir(): string | null;
  feed: LiveFeed;
  clients(): ClientView[];
}

/**
 * Calls `fn` with the run's database: the live run's handle, or, while offline, the last run's run.db
 * opened read-only for this call. Null when there is none.
 */
export function withRunDb<T>(source: DashboardSource, fn: (db: RunDb) => T): T | null {
  const live = source.run();
  if (live) return fn(live.db);
  const dir = source.runDir();
  if (dir === null || !existsSync(join(dir, "run.db"))) return null;
  const db = new Database(join(dir, "run.db"), { readonly: true, fileMustExist: true });
  try {
    db.pragma("busy_timeout = 5000");
    return fn(db);
  } finally {
    db.close();
  }
}
