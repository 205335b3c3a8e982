import type { ConversationMessage } from "../rewards/conversation-text.ts";
import { EpisodeRewarder } from "../rewards/episode-rewarder.ts";
import { RewardModelError } from "../rewards/errors.ts";
import { OnnxScorer } from "../rewards/onnx-pool.ts";
import type { ClientEnvironment } from "./client-environment.ts";
import type { Assignment } from "./protocol.ts";
import type { EpisodeResultMessage } from "./run-episode.ts";

/** The body of `GET /v1/episodes/:id/transcript`: each agent's conversation as the server recorded it. */
export interface EpisodeTranscript {
  episodeId: string;
  agents: Record<string, { messages: ConversationMessage[] }>;
}

/**
 * A swarm client's model-based rewards: for an environment whose manifest declares `rewardModels`,
 * an ended episode's conversations are read back from the server (with one of its episode keys) and
 * scored on this machine (ONNX models in scoring processes, episode-scope judges), and the
 * combined rewards replace the environment's. The parts go with the episode (`info.rewardParts`).
 * A part that cannot score aborts the episode as `reward-model`: retried, never reward 0.
 * The clients of one process (`agentjet train`'s local clients) share one ONNX scorer.
 */
export class ModelRewards {
  readonly #scorer = acquireScorer();
  #closed = false;
  readonly #rewarders = new WeakMap<ClientEnvironment, EpisodeRewarder | null>();

  constructor(readonly fetchImpl: typeof fetch = fetch) {}

  /** `signal`: the episode's, which cuts a judge's tries and waits short when the episode is cancelled. */
  async apply(assignment: Assignment, env: ClientEnvironment, ended: Extract<EpisodeResultMessage, { type: "end" }>, signal?: AbortSignal): Promise<EpisodeResultMessage> {
    try {
      const rewarder = this.#rewarder(env);
      if (!rewarder) return ended;
      const transcript = await this.#transcript(assignment);
      const conversations = Object.fromEntries(Object.entries(transcript.agents).map(([id, a]) => [id, a.messages]));
      const { rewards, parts } = await rewarder.score({ task: assignment.task, envRewards: ended.rewards, conversations, ...(signal ? { signal } : {}) });
      return { ...ended, rewards, info: { ...(ended.info ?? {}), rewardParts: parts } };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      // The server closed the episode meanwhile (its group failed, the run is stopping), or cancelled it:
      // not the reward model's failure; the server's own reason stands.
      const kind = err instanceof EpisodeClosedError || signal?.aborted ? "cancelled" : "reward-model";
      return { type: "abort", episodeId: ended.episodeId, reason: { kind, message } };
    }
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    return releaseScorer();
  }

  #rewarder(env: ClientEnvironment): EpisodeRewarder | null {
    let r = this.#rewarders.get(env);
    if (r === undefined) {
      const spec = env.runtime.manifest.rewardModels;
      r = null;
      if (spec) {
        if (!env.dir) throw new RewardModelError("AJ_ERR_REWARD_MODEL_UNAVAILABLE", `${env.runtime.manifest.name} declares rewardModels, but the client was given no plugin folder to read them from`);
        r = new EpisodeRewarder(spec, env.dir, env.runtime.manifest.reward, this.#scorer, { fetch: this.fetchImpl });
        if (!r.scoresEpisodes) r = null;
      }
      this.#rewarders.set(env, r);
    }
    return r;
  }

  async #transcript(assignment: Assignment): Promise<EpisodeTranscript> {
    const access = Object.values(assignment.agents)[0];
    if (!access) throw new RewardModelError("AJ_ERR_REWARD_MODEL_FAILED", "the episode has no trained agent to score");
    const url = `${access.baseUrl.replace(/\/+$/, "")}/episodes/${encodeURIComponent(assignment.episodeId)}/transcript`;
    const res = await this.fetchImpl(url, { headers: { authorization: `Bearer ${access.apiKey}` } });
    if (!res.ok) {
      const body = (await res.text()).slice(0, 200);
      if (res.status === 409 && body.includes("AJ_ERR_EPISODE_CLOSED")) throw new EpisodeClosedError(`reading the episode's transcript: the server closed it (HTTP 409 ${body})`);
      throw new RewardModelError("AJ_ERR_REWARD_MODEL_FAILED", `reading the episode's transcript: HTTP ${res.status} ${body}`);
    }
    return (await res.json()) as EpisodeTranscript;
  }
}

/** The server had closed the episode before its transcript was read (409 `AJ_ERR_EPISODE_CLOSED`). */
class EpisodeClosedError extends Error {}

/** One ONNX scorer (its scoring processes, their loaded sessions) per process, while any client uses it. */
let shared: { scorer: OnnxScorer; users: number } | undefined;

function acquireScorer(): OnnxScorer {
  shared ??= { scorer: new OnnxScorer(), users: 0 };
  shared.users++;
  return shared.scorer;
}

async function releaseScorer(): Promise<void> {
  if (!shared || --shared.users > 0) return;
  const { scorer } = shared;
  shared = undefined;
  await scorer.close();
}
