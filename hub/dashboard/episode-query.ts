import type { RunDb } from "../../server/db/index.ts";
import { type Episode, episodeFromRow, type EpisodeRow } from "../../server/episodes/index.ts";

/** What the episode browser searches by; every field narrows the list. */
export interface EpisodeFilter {
  env?: string | undefined;
  /** A substring of the task id. */
  task?: string | undefined;
  state?: "registered" | "claimed" | "ended" | "aborted" | undefined;
  /** The abort reason's kind (`crash`, `timeout`, ...). */
  failure?: string | undefined;
  /** Bounds on the mean reward over the episode's agents. */
  minReward?: number | undefined;
  maxReward?: number | undefined;
  eval?: boolean | undefined;
}

/** One row of the episode list. */
export interface EpisodeSummary {
  episodeId: string;
  env: string;
  taskId: string;
  state: string;
  eval: boolean;
  attempt: number;
  createdAt: number;
  endedAt: number | null;
  /** Mean over agents, or null when it has no rewards. */
  reward: number | null;
  rewards: Record<string, number> | null;
  failure: { kind: string; message: string } | null;
  calls: number;
}

export interface EpisodePage {
  episodes: EpisodeSummary[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  next: string | null;
  /** Episodes matching the filter, counted on the first page only (null on later pages). */
  total: number | null;
}

/** A list row: the episode, its mean reward (SQL's) and its call count. */
interface Row extends EpisodeRow {
  reward: number | null;
  calls: number;
}

const REWARD = "(SELECT avg(value) FROM json_each(e.rewards))";

/**
 * The list's SQL and arguments (exported so a test can check its query plan: no sort of the whole
 * table). The page walks `episodes_by_created` newest first and stops at its size, whatever the filter
 * (the planner would otherwise pick `episodes_by_state` for a state filter and sort every match); the
 * count may use any index.
 */
export function episodePageQuery(filter: EpisodeFilter, cursor: string | undefined, limit: number): { where: string; args: Array<string | number>; sql: string; pageArgs: Array<string | number> } {
  const conds: string[] = [];
  const args: Array<string | number> = [];
  if (filter.env !== undefined) (conds.push("e.env = ?"), args.push(filter.env));
  if (filter.task !== undefined) (conds.push("instr(e.task_id, ?) > 0"), args.push(filter.task));
  if (filter.state !== undefined) (conds.push("e.state = ?"), args.push(filter.state));
  if (filter.failure !== undefined) (conds.push("e.abort_reason IS NOT NULL AND json_extract(e.abort_reason, '$.kind') = ?"), args.push(filter.failure));
  if (filter.minReward !== undefined) (conds.push(`${REWARD} >= ?`), args.push(filter.minReward));
  if (filter.maxReward !== undefined) (conds.push(`${REWARD} <= ?`), args.push(filter.maxReward));
  if (filter.eval !== undefined) (conds.push("e.eval = ?"), args.push(filter.eval ? 1 : 0));
  const where = conds.length ? `WHERE ${conds.join(" AND ")}` : "";
  const pageConds = [...conds];
  const pageArgs = [...args];
  if (cursor !== undefined) {
    const [createdAt, episodeId] = decodeCursor(cursor);
    pageConds.push("(e.created_at, e.episode_id) < (?, ?)");
    pageArgs.push(createdAt, episodeId);
  }
  pageArgs.push(limit + 1);
  const sql = `SELECT e.*, ${REWARD} AS reward, (SELECT COUNT(*) FROM calls c WHERE c.episode_id = e.episode_id) AS calls
     FROM episodes e INDEXED BY episodes_by_created ${pageConds.length ? `WHERE ${pageConds.join(" AND ")}` : ""}
     ORDER BY e.created_at DESC, e.episode_id DESC LIMIT ?`;
  return { where, args, sql, pageArgs };
}

/** Newest first, keyset-paged on (created_at, episode_id): a page costs its size, whatever the table's. */
export function listEpisodes(db: RunDb, filter: EpisodeFilter, page: { cursor?: string; limit: number }): EpisodePage {
  const q = episodePageQuery(filter, page.cursor, page.limit);
  const total = page.cursor === undefined ? (db.prepare(`SELECT COUNT(*) AS n FROM episodes e ${q.where}`).get(...q.args) as { n: number }).n : null;
  const rows = db.prepare(q.sql).all(...q.pageArgs) as Row[];
  const more = rows.length > page.limit;
  const shown = more ? rows.slice(0, page.limit) : rows;
  const last = shown.at(-1);
  return { episodes: shown.map(toSummary), next: more && last ? encodeCursor(last.created_at, last.episode_id) : null, total };
}

/** `latestFailures`' query; its one parameter is how many. */
export const LATEST_FAILURES_SQL = `SELECT e.*, NULL AS reward, (SELECT COUNT(*) FROM calls c WHERE c.episode_id = e.episode_id) AS calls
  FROM episodes e
  WHERE e.rowid IN (
    SELECT rowid FROM episodes
    WHERE state = 'aborted' AND COALESCE(json_extract(abort_reason, '$.kind'), '') <> 'cancelled'
    ORDER BY created_at DESC LIMIT ?)
  ORDER BY e.created_at DESC, e.episode_id DESC`;

/**
 * The latest failed episodes, newest first, with the sandbox's stderr tail split out of the message:
 * aborted ones, except those the scheduler cancelled before they ran (claims paused, the run ending),
 * which failed at nothing (the run's end filled the panel with them, hiding the real failures). The
 * index `episodes_by_state_time` is walked newest first until `limit` of them are found (reading each
 * one's abort reason); a run.db from before that index sorts every aborted episode instead.
 */
export function latestFailures(db: RunDb, limit: number): Array<EpisodeSummary & { stderrTail: string | null }> {
  const rows = db.prepare(LATEST_FAILURES_SQL).all(limit) as Row[];
  return rows.map((r) => {
    const s = toSummary(r);
    const split = s.failure ? splitStderr(s.failure.message) : { message: "", stderrTail: null };
    return { ...s, ...(s.failure ? { failure: { kind: s.failure.kind, message: split.message } } : {}), stderrTail: split.stderrTail };
  });
}

/** Sandbox drivers append `; stderr: <tail>` to a failure's message (plugins/docker/stdio-channel.ts). */
export function splitStderr(message: string): { message: string; stderrTail: string | null } {
  const at = message.indexOf("; stderr: ");
  return at === -1 ? { message, stderrTail: null } : { message: message.slice(0, at), stderrTail: message.slice(at + "; stderr: ".length) };
}

function toSummary(r: Row): EpisodeSummary {
  return summarizeEpisode(episodeFromRow(r), r.calls, r.reward);
}

/** One episode's summary; `reward` (the mean over its agents) is computed here unless the query gave it. */
export function summarizeEpisode(e: Episode, calls: number, reward?: number | null): EpisodeSummary {
  const { episodeId, env, taskId, state, attempt, createdAt, endedAt, rewards, abortReason } = e;
  const values = rewards ? Object.values(rewards) : [];
  return {
    episodeId,
    env,
    taskId,
    state,
    eval: e.eval,
    attempt,
    createdAt,
    endedAt,
    reward: reward !== undefined ? reward : values.length ? values.reduce((a, b) => a + b, 0) / values.length : null,
    rewards,
    // A row another writer left may lack either field.
    failure: abortReason === null ? null : { kind: String(abortReason.kind ?? "unknown"), message: String(abortReason.message ?? "") },
    calls,
  };
}

function encodeCursor(createdAt: number, episodeId: string): string {
  return Buffer.from(JSON.stringify([createdAt, episodeId])).toString("base64url");
}

/** A cursor this module did not make is a 400 at the route (it throws a RangeError). */
export function decodeCursor(cursor: string): [number, string] {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw new RangeError("malformed cursor");
  }
  if (!Array.isArray(v) || v.length !== 2 || typeof v[0] !== "number" || typeof v[1] !== "string") throw new RangeError("malformed cursor");
  return [v[0], v[1]];
}
