import type { CallRecord } from "../tracker/call-record.ts";
import { addMergeStats, createMergeStats, type MergeOptions, type MergeStats, mergeTimelines } from "./merge-timelines.ts";
import type { EndedEpisode } from "./ports.ts";
import type { Sample } from "./sample.ts";

/** One (episode, agent) of a trainable policy with its reward and merged samples: the unit GRPO scores. */
export interface EpisodeUnit {
  policy: string;
  episodeId: string;
  agentId: string;
  taskId: string;
  env: string;
  /** The group this unit is scored in (`groupKey`). */
  group: string;
  clientId: string | null;
  reward: number;
  samples: Sample[];
}

export interface EpisodeSamples {
  units: EpisodeUnit[];
  merge: MergeStats;
  /** Agents that made calls for a trainable policy but got no reward: left out, never scored 0. */
  unrewardedAgents: number;
}

/**
 * The identity of an episode's GRPO group: the group it was formed in, scoped by environment, never a
 * bare task id (environments reuse ids such as `test-0-32`). Without a group id, the task's.
 */
export function groupKey(episode: Pick<EndedEpisode, "env" | "groupId" | "taskId">): string {
  return (episode.groupId ?? null) === null ? `${episode.env}\u0000task\u0000${episode.taskId}` : `${episode.env}\u0000group\u0000${episode.groupId}`;
}

/** Merges a rewarded episode's calls per agent into samples, for the policies in `trainable`. */
export function buildEpisodeSamples(
  episode: EndedEpisode,
  options: MergeOptions,
  trainable: ReadonlySet<string>,
): EpisodeSamples {
  const out: EpisodeSamples = { units: [], merge: createMergeStats(), unrewardedAgents: 0 };
  if (episode.outcome.kind !== "rewarded") return out;
  const rewards = episode.outcome.rewards;
  const group = groupKey(episode);
  const byAgent = new Map<string, CallRecord[]>();
  for (const c of episode.calls) {
    if (!trainable.has(c.policy)) continue;
    const key = `${c.agentId}\u0000${c.policy}`;
    const list = byAgent.get(key);
    if (list) list.push(c);
    else byAgent.set(key, [c]);
  }
  // An agent of a trained policy that made no call, or only calls with nothing to train (overflowed),
  // still counts in its group with no samples: left out, its group never completed, and its other
  // episodes waited in the pool for good (tic-tac-toe: a game over before the second seat moved).
  for (const [agentId, b] of Object.entries(episode.agents ?? {})) {
    const key = `${agentId}\u0000${b.target}`;
    if (b.kind === "policy" && trainable.has(b.target) && !byAgent.has(key) && rewards[agentId] !== undefined) byAgent.set(key, []);
  }
  for (const [key, calls] of byAgent) {
    const [agentId, policy] = key.split("\u0000") as [string, string];
    const reward = rewards[agentId];
    if (reward === undefined || !Number.isFinite(reward)) {
      out.unrewardedAgents++;
      continue;
    }
    const merged = calls.length > 0 ? mergeTimelines(calls, options) : null;
    if (merged) addMergeStats(out.merge, merged.stats);
    const samples = (merged?.timelines ?? []).map(
      (t, i): Sample => ({
        sampleId: `${episode.episodeId}:${agentId}:${i}`,
        episodeId: episode.episodeId,
        agentId,
        policy,
        taskId: episode.taskId,
        env: episode.env,
        group,
        tokenIds: t.tokenIds,
        lossMask: t.lossMask,
        logprobs: t.logprobs,
        versions: t.versions,
        reward,
        advantage: 0,
        weight: 1,
        calls: t.callIds.length,
      }),
    );
    out.units.push({
      policy,
      episodeId: episode.episodeId,
      agentId,
      taskId: episode.taskId,
      env: episode.env,
      group,
      clientId: episode.clientId,
      reward,
      samples,
    });
  }
  return out;
}
