import { type ChatMessage, createChatCompletion } from "./chat.ts";
import type { EpisodeHandle, Workflow } from "./workflow.ts";

/**
 * The default agent loop: reset the environment; for each agent whose turn it is, one chat completion
 * with that agent's key over that agent's own conversation (restarted by a `fresh` observation; constrained to the observation's
 * `responseFormat` when it carries one); step; until done; then end with the
 * environment's rewards. A sandbox failure aborts with its failure kind. Past `maxTurns`, the episode
 * ends with the bottom of the reward range for every driven agent.
 */
export function createDefaultAgentLoop(options: { fetch?: typeof fetch } = {}): Workflow {
  return async (episode: EpisodeHandle) => {
    const conversations = new Map<string, ChatMessage[]>();
    let turn = await episode.env.reset();
    for (let n = 0; ; n++) {
      if (turn.kind === "failed") return episode.abort(turn.failure);
      if (turn.value.done) return episode.end(turn.value.rewards ?? {}, turn.value.info ?? {});
      if (n >= episode.maxTurns) {
        const min = episode.env.reward.min;
        return episode.end(Object.fromEntries(Object.keys(episode.agents).map((id) => [id, min])), { truncated: true });
      }
      const actions: Record<string, string> = {};
      for (const [agentId, observation] of Object.entries(turn.value.observations)) {
        const access = episode.agents[agentId];
        if (!access) return episode.abort({ kind: "protocol", message: `the environment asked agent '${agentId}', which has no key` });
        const conversation = conversations.get(agentId) ?? [];
        conversations.set(agentId, conversation);
        if (observation.fresh) conversation.length = 0;
        conversation.push(...observation.messages);
        const reply = await createChatCompletion(access, conversation, {
          signal: episode.signal,
          ...(observation.responseFormat ? { responseFormat: observation.responseFormat } : {}),
          ...(options.fetch ? { fetch: options.fetch } : {}),
        });
        conversation.push({ role: "assistant", content: reply });
        actions[agentId] = reply;
      }
      turn = await episode.env.step(actions);
    }
  };
}
