import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { policyCheckpointDir, readLatestCheckpoint } from "../../../hub/train/checkpoint.ts";

/** sha256 of a policy's weights in the run's newest checkpoint. */
export function weightsHash(runDir: string, policy = "main"): string {
  const latest = readLatestCheckpoint(runDir);
  if (latest.kind !== "ok") throw new Error(`${runDir}: no checkpoint (${latest.why})`);
  return createHash("sha256").update(readFileSync(join(policyCheckpointDir(latest.dir, policy), "weights.f32"))).digest("hex");
}

/** One trained episode of the ledger, with the group the scheduler formed (from the episode's record). */
export interface TrainedRow {
  step: number;
  episodeId: string;
  groupId: string;
}

/** The trained ledger (run.db's `trained_episodes`), by step then episode id. */
export function trainedLedger(runDir: string): TrainedRow[] {
  const db = new Database(join(runDir, "run.db"), { readonly: true });
  try {
    const rows = db
      .prepare("SELECT t.step, t.episode_id, e.metadata FROM trained_episodes t JOIN episodes e ON e.episode_id = t.episode_id")
      .all() as Array<{ step: number; episode_id: string; metadata: string }>;
    return rows
      .map((r) => ({ step: r.step, episodeId: r.episode_id, groupId: (JSON.parse(r.metadata) as { groupId: string }).groupId }))
      .sort((a, b) => a.step - b.step || (a.episodeId < b.episodeId ? -1 : a.episodeId > b.episodeId ? 1 : 0));
  } finally {
    db.close();
  }
}

/** The slot an episode id plays (`b3-g1-m0`), without the resume session (`-r2`) and the try (`-t0`). */
export function slotOf(episodeId: string): string {
  return episodeId.replace(/(-r\d+)?-t\d+$/, "");
}
