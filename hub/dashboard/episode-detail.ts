import type { RunDb } from "../../server/db/index.ts";
import { episodeFromRow, type EpisodeRow } from "../../server/episodes/index.ts";
import { type MergeOptions, mergeTimelines } from "../../server/training/index.ts";
import type { PromptSegment, Tokenizer } from "../../server/tokenizers/index.ts";
import { promptLength } from "../../server/tokenizers/index.ts";
import { type CallRecord, type CallRow, fromCallRows } from "../../server/tracker/index.ts";
import { type EpisodeSummary, summarizeEpisode } from "./episode-query.ts";

/** One generated token of a call: its id, its text, its log-prob, and whether the loss trains it. */
export interface OutputToken {
  id: number;
  text: string;
  logprob: number;
  trained: boolean;
}

/** One call as the model saw it: the prompt message by message (template included), then what it generated. */
export interface CallView {
  callId: string;
  agentId: string;
  policy: string;
  seq: number;
  trainable: boolean;
  finishReason: CallRecord["finishReason"];
  version: number;
  latencyMs: number;
  startedAt: number;
  prompt: Array<{ role: string; text: string; tokens: number }>;
  header: string;
  output: OutputToken[];
  outputText: string;
  /** Index into `samples` of the merged sample that carries this call's tokens; null when none does. */
  sample: number | null;
}

/** One merged training sample of the episode (timeline merging, as the coordinator builds them). */
export interface SampleView {
  index: number;
  agentId: string;
  policy: string;
  callIds: string[];
  tokens: number;
  trainedTokens: number;
  /** The step that trained it, from the trained-episodes ledger; null when not (yet) trained. */
  trainedAtStep: number | null;
}

export interface EpisodeDetail {
  episode: EpisodeSummary & { metadata: unknown; groupId: string | null };
  calls: CallView[];
  samples: SampleView[];
}



export interface DetailOptions {
  merge: MergeOptions;
  /** The tokenizer of a policy, to show each token's text; null: ids only. */
  tokenizer: (policy: string) => Tokenizer | null;
}

/**
 * One episode from run.db with every call, the merged samples its calls go into and, per generated
 * token, whether it is under the loss mask. The samples are rebuilt from the recorded calls with the
 * run's merge options (the pool deletes its copy once trained): a call's prompt and output are, id for
 * id, a prefix of its sample, so its output's mask is the sample's mask at those positions.
 */
export function readEpisode(db: RunDb, episodeId: string, o: DetailOptions): EpisodeDetail | null {
  const row = db.prepare("SELECT * FROM episodes WHERE episode_id = ?").get(episodeId) as EpisodeRow | undefined;
  if (!row) return null;
  const episode = episodeFromRow(row);
  const records = fromCallRows(db.prepare("SELECT * FROM calls WHERE episode_id = ? ORDER BY agent_id, seq").all(episodeId) as CallRow[]);
  const { rewards, metadata } = episode;
  const trainedSteps = trainedStepsOf(db, episodeId);

  const samples: SampleView[] = [];
  const placed = new Map<string, { sample: number; mask: number[] }>();
  if (episode.state === "ended" && !episode.eval && rewards) {
    const byAgent = new Map<string, Array<CallRecord & { trainable: boolean }>>();
    for (const c of records) {
      if (!c.trainable) continue;
      const key = `${c.agentId}\u0000${c.policy}`;
      byAgent.set(key, [...(byAgent.get(key) ?? []), c]);
    }
    for (const calls of byAgent.values()) {
      const { agentId, policy } = calls[0]!;
      const reward = rewards[agentId];
      if (reward === undefined || !Number.isFinite(reward)) continue;
      for (const t of mergeTimelines(calls, o.merge).timelines) {
        const index = samples.length;
        samples.push({
          index,
          agentId,
          policy,
          callIds: t.callIds,
          tokens: t.tokenIds.length,
          trainedTokens: t.lossMask.reduce((a, b) => a + b, 0),
          trainedAtStep: trainedSteps.get(policy) ?? null,
        });
        for (const id of t.callIds) {
          const c = calls.find((x) => x.callId === id)!;
          const start = promptLength(c);
          placed.set(id, { sample: index, mask: t.lossMask.slice(start, start + c.outputIds.length) });
        }
      }
    }
  }

  const calls = records.map((c): CallView => {
    const tok = o.tokenizer(c.policy);
    const text = (ids: PromptSegment["ids"]): string => (tok ? tok.decode(ids) : ids.join(" "));
    const place = placed.get(c.callId);
    return {
      callId: c.callId,
      agentId: c.agentId,
      policy: c.policy,
      seq: c.seq,
      trainable: c.trainable,
      finishReason: c.finishReason,
      version: c.version,
      latencyMs: c.latencyMs,
      startedAt: c.startedAt,
      prompt: c.segments.map((s) => ({ role: s.role, text: text(s.ids), tokens: s.ids.length })),
      header: text(c.headerIds),
      output: c.outputIds.map((id, i) => ({ id, text: text([id]), logprob: c.outputLogprobs[i] ?? 0, trained: place?.mask[i] === 1 })),
      outputText: c.outputText,
      sample: place?.sample ?? null,
    };
  });

  const groupId = typeof metadata["groupId"] === "string" ? metadata["groupId"] : null;
  return {
    episode: { ...summarizeEpisode(episode, records.length), metadata, groupId },
    calls,
    samples,
  };
}

function trainedStepsOf(db: RunDb, episodeId: string): Map<string, number> {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'trained_episodes'").get();
  if (!exists) return new Map();
  const rows = db.prepare("SELECT policy, step FROM trained_episodes WHERE episode_id = ?").all(episodeId) as Array<{ policy: string; step: number }>;
  return new Map(rows.map((r) => [r.policy, r.step]));
}
