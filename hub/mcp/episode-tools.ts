import { existsSync } from "node:fs";
import { join } from "node:path";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import Database from "better-sqlite3";
import { z } from "zod";
import { callRowSql, type RunDb } from "../../server/db/index.ts";
import { episodeFromRow, type EpisodeRow } from "../../server/episodes/index.ts";
import { withLeftOut } from "../../server/tracker/index.ts";
import { latestFailures, listEpisodes, summarizeEpisode } from "../dashboard/episode-query.ts";
import { BadCursorError, EpisodeNotFoundError, NotARunDirError } from "./errors.ts";
import { registerTool } from "./register-tool.ts";
import { resolveDir, type ToolContext } from "./tool-context.ts";

const RunRef = z.string().min(1).describe("The run: the id run_start returned, or a run directory (relative to the project)");

const EpisodeSummary = z.object({
  episodeId: z.string(),
  env: z.string(),
  taskId: z.string(),
  state: z.string().describe("registered, claimed, ended or aborted"),
  eval: z.boolean(),
  attempt: z.number().int(),
  createdAt: z.number(),
  endedAt: z.number().nullable(),
  reward: z.number().nullable().describe("Mean over the episode's agents"),
  rewards: z.record(z.string(), z.number()).nullable(),
  failure: z.object({ kind: z.string(), message: z.string() }).nullable(),
  calls: z.number().int(),
});

const CallView = z.object({
  callId: z.string(),
  agentId: z.string(),
  policy: z.string(),
  seq: z.number().int(),
  trainable: z.boolean(),
  version: z.number().int().describe("The policy's weight version that generated it"),
  finishReason: z.string(),
  latencyMs: z.number(),
  promptTokens: z.number().int(),
  outputTokens: z.number().int(),
  messages: z.array(z.object({ role: z.string(), content: z.string() })).describe("The prompt as sent (content longer than maxChars is cut)"),
  outputText: z.string(),
});

/** Opens a run's run.db read-only (the run may be writing it: WAL lets both). */
function withDb<T>(runDir: string, fn: (db: RunDb) => T): T {
  const path = join(runDir, "run.db");
  if (!existsSync(path)) throw new NotARunDirError(runDir, "run.db");
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    db.pragma("busy_timeout = 5000");
    return fn(db);
  } finally {
    db.close();
  }
}

const cut = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text);

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (typeof (p as { text?: unknown }).text === "string" ? (p as { text: string }).text : JSON.stringify(p))).join("");
  return content === null || content === undefined ? "" : JSON.stringify(content);
}

interface CallRow {
  call_id: string;
  agent_id: string;
  policy: string;
  seq: number;
  trainable: number;
  version: number;
  finish_reason: string;
  latency_ms: number;
  messages: string;
  /** Leading messages left out: its agent's previous call's (server/tracker/call-rows.ts). */
  messages_from: number;
  output_text: string;
  prompt_tokens: number | null;
  output_tokens: number;
}

/** `episode_show`: one episode and its first `maxCalls` calls, each call's messages whole and cut to `maxChars`. */
export function showEpisode(db: RunDb, runDir: string, episodeId: string, maxCalls: number, maxChars: number) {
  const row = db.prepare("SELECT * FROM episodes WHERE episode_id = ?").get(episodeId) as EpisodeRow | undefined;
  if (!row) throw new EpisodeNotFoundError(episodeId, runDir);
  const episode = episodeFromRow(row);
  const total = (db.prepare("SELECT COUNT(*) AS n FROM calls WHERE episode_id = ?").get(episodeId) as { n: number }).n;
  // Token counts without reading the ids into JS; rows in order, so a row's left-out messages are its agent's previous row's.
  const sql = callRowSql(db);
  const rows = db
    .prepare(
      `SELECT call_id, agent_id, policy, seq, trainable, version, finish_reason, latency_ms, messages, ${sql.messagesFrom} AS messages_from, output_text,
         ${sql.promptTokens} AS prompt_tokens, json_array_length(output_ids) AS output_tokens
       FROM calls WHERE episode_id = ? ORDER BY agent_id, seq LIMIT ?`,
    )
    .all(episodeId, maxCalls) as CallRow[];
  const lastMessages = new Map<string, Array<{ role?: unknown; content?: unknown }>>();
  const messagesOf = (r: CallRow) => {
    const own = JSON.parse(r.messages) as Array<{ role?: unknown; content?: unknown }>;
    const all = withLeftOut(lastMessages.get(r.agent_id) ?? [], r.messages_from, own);
    lastMessages.set(r.agent_id, all);
    return all;
  };
  return {
    episode: { ...summarizeEpisode(episode, total), metadata: episode.metadata },
    calls: rows.map((r) => ({
      callId: r.call_id,
      agentId: r.agent_id,
      policy: r.policy,
      seq: r.seq,
      trainable: r.trainable === 1,
      version: r.version,
      finishReason: r.finish_reason,
      latencyMs: r.latency_ms,
      promptTokens: r.prompt_tokens ?? 0,
      outputTokens: r.output_tokens,
      messages: messagesOf(r).map((m) => ({ role: String(m.role ?? ""), content: cut(contentText(m.content), maxChars) })),
      outputText: cut(r.output_text, maxChars),
    })),
    callsShown: rows.length,
  };
}

export function registerEpisodeTools(server: McpServer, ctx: ToolContext): void {
  registerTool(server, {
    name: "episodes_query",
    title: "Search a run's episodes",
    description:
      "Lists a run's recorded episodes (run.db), newest first, filtered by environment, task id substring, state, failure kind, reward range or eval. Paged: pass the answer's `next` as `cursor` for the next page (null on the last). `total` counts the matches on the first page only.",
    input: z.object({
      run: RunRef,
      env: z.string().optional(),
      task: z.string().optional().describe("A substring of the task id"),
      state: z.enum(["registered", "claimed", "ended", "aborted"]).optional(),
      failure: z.string().optional().describe("The failure kind of aborted episodes (crash, timeout, ...)"),
      minReward: z.number().optional().describe("Lower bound on the mean reward over the episode's agents"),
      maxReward: z.number().optional(),
      eval: z.boolean().optional().describe("true: evaluation episodes only; false: training episodes only"),
      limit: z.number().int().min(1).max(200).default(20),
      cursor: z.string().optional(),
    }),
    result: z.object({ runDir: z.string(), episodes: z.array(EpisodeSummary), next: z.string().nullable(), total: z.number().int().nullable() }),
    annotations: { readOnlyHint: true },
    run: async (a) => {
      const runDir = resolveDir(ctx, "run", a.run);
      const page = withDb(runDir, (db) => {
        try {
          return listEpisodes(db, { env: a.env, task: a.task, state: a.state, failure: a.failure, minReward: a.minReward, maxReward: a.maxReward, eval: a.eval }, { limit: a.limit, ...(a.cursor !== undefined ? { cursor: a.cursor } : {}) });
        } catch (err) {
          if (err instanceof RangeError) throw new BadCursorError();
          throw err;
        }
      });
      return { runDir, ...page };
    },
  });
  registerTool(server, {
    name: "episode_show",
    title: "One episode with its calls",
    description:
      "One episode of a run: state, rewards, failure, metadata, and each model call (agent, weight version, prompt messages, output text, prompt and output token counts, finish reason). Long texts are cut at maxChars.",
    input: z.object({
      run: RunRef,
      episodeId: z.string(),
      maxCalls: z.number().int().min(1).max(500).default(50),
      maxChars: z.number().int().min(100).max(100_000).default(4000),
    }),
    result: z.object({
      runDir: z.string(),
      episode: EpisodeSummary.extend({ metadata: z.unknown() }),
      calls: z.array(CallView),
      callsShown: z.number().int(),
    }),
    annotations: { readOnlyHint: true },
    run: async (a) => {
      const runDir = resolveDir(ctx, "run", a.run);
      return { runDir, ...withDb(runDir, (db) => showEpisode(db, runDir, a.episodeId, a.maxCalls, a.maxChars)) };
    },
  });
  registerTool(server, {
    name: "failures_list",
    title: "A run's infrastructure failures",
    description:
      "Aborted episodes of a run: the count per failure kind, and the latest failures with their message and the sandbox's stderr tail (as the dashboard lists them: not the episodes the scheduler cancelled before they ran, counted under `cancelled`).",
    input: z.object({ run: RunRef, limit: z.number().int().min(1).max(200).default(20) }),
    result: z.object({
      runDir: z.string(),
      counts: z.record(z.string(), z.number().int()),
      latest: z.array(EpisodeSummary.extend({ stderrTail: z.string().nullable() })),
    }),
    annotations: { readOnlyHint: true },
    run: async (a) => {
      const runDir = resolveDir(ctx, "run", a.run);
      return withDb(runDir, (db) => {
        const rows = db
          .prepare("SELECT COALESCE(json_extract(abort_reason, '$.kind'), 'unknown') AS kind, COUNT(*) AS n FROM episodes WHERE state = 'aborted' GROUP BY kind")
          .all() as Array<{ kind: string; n: number }>;
        return { runDir, counts: Object.fromEntries(rows.map((r) => [r.kind, r.n])), latest: latestFailures(db, a.limit) };
      });
    },
  });
}
