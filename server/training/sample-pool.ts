import type { Database } from "better-sqlite3";
import type { EpisodeUnit } from "./episode-samples.ts";
import { PoolCorruptError } from "./errors.ts";
import type { Sample } from "./sample.ts";

/** What the batching strategies see of one pooled (episode, agent); its samples stay on disk. */
export type PoolEntry = Omit<EpisodeUnit, "samples"> & {
  /** Arrival order in the pool (older first). */
  seq: number;
  sampleCount: number;
};

const SCHEMA = `
CREATE TABLE IF NOT EXISTS training_pool_units (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  policy TEXT NOT NULL,
  episode_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  env TEXT NOT NULL,
  group_key TEXT NOT NULL,
  client_id TEXT,
  reward REAL NOT NULL,
  sample_count INTEGER NOT NULL,
  UNIQUE (policy, episode_id, agent_id)
);
CREATE TABLE IF NOT EXISTS training_pool_samples (
  sample_id TEXT NOT NULL,
  policy TEXT NOT NULL,
  episode_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  calls INTEGER NOT NULL,
  token_ids BLOB NOT NULL,
  loss_mask BLOB NOT NULL,
  logprobs BLOB NOT NULL,
  versions BLOB NOT NULL,
  PRIMARY KEY (policy, sample_id)
);
CREATE INDEX IF NOT EXISTS training_pool_samples_episode ON training_pool_samples (policy, episode_id);
`;

interface UnitRow {
  seq: number;
  policy: string;
  episode_id: string;
  agent_id: string;
  task_id: string;
  env: string;
  group_key: string;
  client_id: string | null;
  reward: number;
  sample_count: number;
}

interface SampleRow {
  sample_id: string;
  agent_id: string;
  idx: number;
  calls: number;
  token_ids: Buffer;
  loss_mask: Buffer;
  logprobs: Buffer;
  versions: Buffer;
}

/**
 * The finished episodes waiting for a batch, per policy, in the run's SQLite. An episode is written in one
 * transaction when it ends and deleted only after the step that used it has trained, so a restart loses
 * nothing that finished. Entries are mirrored in memory; token data is read back at batch time.
 */
export class SamplePool {
  readonly #db: Database;
  readonly #entries = new Map<string, PoolEntry[]>();
  readonly #insertUnit;
  readonly #insertSample;
  readonly #deleteUnits;
  readonly #deleteSamples;
  readonly #deleteUnitSamples;
  readonly #selectSamples;
  readonly #selectSeq;

  constructor(db: Database) {
    this.#db = db;
    db.exec(SCHEMA);
    // A pool written before groups had their own identity: its units are scored by task, as they were.
    const columns = db.prepare<[], { name: string }>("PRAGMA table_info(training_pool_units)").all();
    if (!columns.some((c) => c.name === "group_key")) {
      db.exec("ALTER TABLE training_pool_units ADD COLUMN group_key TEXT NOT NULL DEFAULT ''");
      db.exec("UPDATE training_pool_units SET group_key = env || char(0) || 'task' || char(0) || task_id");
    }
    this.#insertUnit = db.prepare<[string, string, string, string, string, string, string | null, number, number]>(
      `INSERT OR REPLACE INTO training_pool_units (policy, episode_id, agent_id, task_id, env, group_key, client_id, reward, sample_count)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#insertSample = db.prepare<[string, string, string, string, number, number, Buffer, Buffer, Buffer, Buffer]>(
      `INSERT OR REPLACE INTO training_pool_samples (sample_id, policy, episode_id, agent_id, idx, calls, token_ids, loss_mask, logprobs, versions)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#deleteUnits = db.prepare<[string, string]>("DELETE FROM training_pool_units WHERE policy = ? AND episode_id = ?");
    this.#deleteSamples = db.prepare<[string, string]>("DELETE FROM training_pool_samples WHERE policy = ? AND episode_id = ?");
    this.#deleteUnitSamples = db.prepare<[string, string, string]>(
      "DELETE FROM training_pool_samples WHERE policy = ? AND episode_id = ? AND agent_id = ?",
    );
    this.#selectSamples = db.prepare<[string, string], SampleRow>(
      `SELECT sample_id, agent_id, idx, calls, token_ids, loss_mask, logprobs, versions
       FROM training_pool_samples WHERE policy = ? AND episode_id = ? ORDER BY agent_id, idx`,
    );
    this.#selectSeq = db.prepare<[string, string, string], { seq: number }>(
      "SELECT seq FROM training_pool_units WHERE policy = ? AND episode_id = ? AND agent_id = ?",
    );
    const rows = db.prepare<[], UnitRow>("SELECT * FROM training_pool_units ORDER BY seq").all();
    for (const r of rows) this.#remember(toEntry(r));
  }

  /** Adds one episode's units (all policies) atomically; a unit already pooled is replaced, not doubled. */
  add(units: readonly EpisodeUnit[]): void {
    if (units.length === 0) return;
    const write = this.#db.transaction(() => {
      for (const u of units) {
        this.#deleteUnitSamples.run(u.policy, u.episodeId, u.agentId);
        this.#insertUnit.run(u.policy, u.episodeId, u.agentId, u.taskId, u.env, u.group, u.clientId, u.reward, u.samples.length);
        u.samples.forEach((s, idx) => {
          this.#insertSample.run(
            s.sampleId, u.policy, u.episodeId, u.agentId, idx, s.calls,
            encodeInt32(s.tokenIds), Buffer.from(Uint8Array.from(s.lossMask)),
            Buffer.from(Float64Array.from(s.logprobs).buffer), encodeInt32(s.versions),
          );
        });
      }
    });
    write();
    for (const u of units) {
      this.#forget(u.policy, u.episodeId, u.agentId);
      const seq = this.#selectSeq.get(u.policy, u.episodeId, u.agentId)!.seq;
      this.#remember({
        policy: u.policy, episodeId: u.episodeId, agentId: u.agentId, taskId: u.taskId, env: u.env,
        group: u.group, clientId: u.clientId, reward: u.reward, seq, sampleCount: u.samples.length,
      });
    }
  }

  /** The policy's pooled units, oldest first. */
  entries(policy: string): readonly PoolEntry[] {
    return this.#entries.get(policy) ?? [];
  }

  episodeCount(policy: string): number {
    return new Set(this.entries(policy).map((e) => e.episodeId)).size;
  }

  /** Reads the samples of the given entries back, with their pooled reward. */
  loadSamples(entries: readonly PoolEntry[]): Sample[] {
    const wanted = new Map<string, PoolEntry>();
    for (const e of entries) wanted.set(`${e.policy}\u0000${e.episodeId}\u0000${e.agentId}`, e);
    const episodes = new Set<string>();
    const out: Sample[] = [];
    for (const e of entries) {
      const key = `${e.policy}\u0000${e.episodeId}`;
      if (episodes.has(key)) continue;
      episodes.add(key);
      for (const row of this.#selectSamples.all(e.policy, e.episodeId)) {
        const entry = wanted.get(`${e.policy}\u0000${e.episodeId}\u0000${row.agent_id}`);
        if (entry) out.push(decodeSample(row, entry));
      }
    }
    return out;
  }

  /** Deletes whole episodes of a policy (after the step that used them, or when filtered out). */
  remove(policy: string, episodeIds: readonly string[]): void {
    const ids = new Set(episodeIds);
    const del = this.#db.transaction(() => {
      for (const id of ids) {
        this.#deleteSamples.run(policy, id);
        this.#deleteUnits.run(policy, id);
      }
    });
    del();
    const list = this.#entries.get(policy);
    if (list) this.#entries.set(policy, list.filter((e) => !ids.has(e.episodeId)));
  }

  /** Deletes every pooled episode of a policy. */
  clear(policy: string): void {
    this.remove(policy, this.entries(policy).map((e) => e.episodeId));
  }

  #remember(e: PoolEntry): void {
    const list = this.#entries.get(e.policy);
    if (list) list.push(e);
    else this.#entries.set(e.policy, [e]);
  }

  #forget(policy: string, episodeId: string, agentId: string): void {
    const list = this.#entries.get(policy);
    if (list) this.#entries.set(policy, list.filter((e) => e.episodeId !== episodeId || e.agentId !== agentId));
  }
}

function toEntry(r: UnitRow): PoolEntry {
  return {
    policy: r.policy, episodeId: r.episode_id, agentId: r.agent_id, taskId: r.task_id, env: r.env,
    group: r.group_key, clientId: r.client_id, reward: r.reward, seq: r.seq, sampleCount: r.sample_count,
  };
}

function encodeInt32(xs: readonly number[]): Buffer {
  return Buffer.from(Int32Array.from(xs).buffer);
}

function decodeInt32(b: Buffer): number[] {
  return Array.from(new Int32Array(Uint8Array.from(b).buffer));
}

function decodeSample(row: SampleRow, e: PoolEntry): Sample {
  const n = row.token_ids.byteLength / 4;
  const mask = Array.from(row.loss_mask);
  const lp = new Float64Array(n);
  new Uint8Array(lp.buffer).set(row.logprobs);
  const versions = decodeInt32(row.versions);
  if (mask.length !== n || row.logprobs.byteLength !== n * 8 || versions.length !== n) {
    throw new PoolCorruptError(row.sample_id, "column lengths differ");
  }
  return {
    sampleId: row.sample_id, episodeId: e.episodeId, agentId: e.agentId, policy: e.policy, taskId: e.taskId,
    env: e.env, group: e.group, tokenIds: decodeInt32(row.token_ids), lossMask: mask, logprobs: Array.from(lp), versions,
    reward: e.reward, advantage: 0, weight: 1, calls: row.calls,
  };
}
