import { agentTranscript } from "../../server/episodes/index.ts";
import type { Tracker } from "../../server/tracker/index.ts";
import {
  type ConversationMessage,
  conversationText,
  Judge,
  type JudgePart,
  rankRewards,
  readRubric,
  type RewardParts,
  taskSlots,
} from "../../sdk/rewards/index.ts";
import type { GroupScorer } from "../scheduler/index.ts";
import type { PreparedEnvironment } from "../train/prepare-environments.ts";

/**
 * The group scorers of a run: one per environment whose manifest's `rewardModels` is a group judge
 * (`scope: group`). The judge sees the group's n trajectories at once, per trained agent, and its
 * ranking becomes the rewards (`rankRewards`); the recorded conversations come from the tracker, so
 * this runs where the group is assembled, next to the scheduler.
 */
export function groupScorers(envs: readonly PreparedEnvironment[], tracker: Tracker): Map<string, GroupScorer> {
  const out = new Map<string, GroupScorer>();
  for (const env of envs) {
    const spec = env.installed.manifest.rewardModels;
    const part = spec?.parts.find((p): p is JudgePart => p.kind === "judge" && p.scope === "group");
    if (!part) continue;
    const judge = new Judge(part, readRubric(part, env.installed.dir));
    const range = env.installed.manifest.reward;
    out.set(env.name, {
      async score({ task, episodes, signal }) {
        const slots = taskSlots(task);
        const agents = [...new Set(episodes.flatMap((e) => Object.keys(e.rewards)))];
        const scored = episodes.map((e) => ({ rewards: {} as Record<string, number>, parts: {} as RewardParts, env: e.rewards }));
        for (const agentId of agents) {
          const transcripts = episodes.map((e) => conversationText(agentTranscript(tracker, e.episodeId, agentId) as ConversationMessage[], part.input));
          const verdict = await judge.rankGroup({ ...slots, transcripts }, { signal });
          rankRewards(verdict.ranking!, range).forEach((reward, i) => {
            const o = scored[i]!;
            o.rewards[agentId] = reward;
            o.parts[agentId] = { values: { env: o.env[agentId] ?? 0, [part.name]: reward }, verdicts: { [part.name]: verdict.raw } };
          });
        }
        return scored.map((o) => ({ rewards: o.rewards, info: { rewardParts: o.parts } }));
      },
    });
  }
  return out;
}
