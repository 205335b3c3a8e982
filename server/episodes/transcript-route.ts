import type { FastifyInstance } from "fastify";
import { conflict, HttpError, unauthorized } from "../openai/errors.ts";
import { parseBody } from "../openai/parse-body.ts";
import type { EpisodeStore } from "./episode-store.ts";
import { EpisodeParamsSchema } from "./schemas.ts";
import { agentTranscript } from "./transcript.ts";

/**
 * `GET /v1/episodes/:id/transcript` (auth: one of that episode's keys): each agent's conversation as
 * the server recorded it, its last call's messages followed by the reply. A client scores an episode it
 * ran with model-based rewards from this, whatever agent framework made the calls.
 */
export async function transcriptRoute(app: FastifyInstance, store: EpisodeStore): Promise<void> {
  app.get("/v1/episodes/:id/transcript", { config: { auth: "episode-key" } }, async (request) => {
    const episodeId = parseBody(EpisodeParamsSchema, request.params).id;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? "");
    if (!m) throw unauthorized("missing API key (Authorization: Bearer sk-aj-... of this episode)");
    const auth = store.authorize(m[1]!);
    if (auth.kind === "unauthorized") throw unauthorized(auth.message);
    if (auth.kind === "conflict") throw conflict(auth.message);
    if (auth.episode.episodeId !== episodeId) throw new HttpError(403, "AJ_ERR_EPISODE_NOT_YOURS", `this key belongs to episode '${auth.episode.episodeId}', not '${episodeId}'`);
    const agents: Record<string, { messages: unknown[] }> = {};
    for (const agentId of Object.keys(auth.episode.agents)) agents[agentId] = { messages: agentTranscript(store.tracker, episodeId, agentId) };
    return { episodeId, agents };
  });
}
