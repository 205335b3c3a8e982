import type { FastifyInstance, FastifyRequest } from "fastify";
import { HttpError } from "../openai/errors.ts";
import { parseBody } from "../openai/parse-body.ts";
import type { TrackedCall } from "../tracker/call-record.ts";
import type { Episode, RegisterEpisodeInput } from "./episode.ts";
import type { EpisodeStore } from "./episode-store.ts";
import { callerIdentity, episodeOwners } from "./ownership.ts";
import type { Done, EpisodeAction, EpisodeRefusal } from "./outcomes.ts";
import { episodeOrHttpError, refusalToHttp } from "./refusal-http.ts";
import {
  AbortBodySchema,
  ClaimBodySchema,
  EndBodySchema,
  EpisodeParamsSchema,
  ListQuerySchema,
  MAX_METADATA_BYTES,
  metadataBytes,
  RegisterBodySchema,
} from "./schemas.ts";

export function checkMetadataSize(metadata: Record<string, unknown> | undefined): void {
  if (metadata === undefined) return;
  const bytes = metadataBytes(metadata);
  if (bytes > MAX_METADATA_BYTES) {
    throw new HttpError(413, "AJ_ERR_METADATA_TOO_LARGE", `metadata is ${bytes} bytes of JSON; at most ${MAX_METADATA_BYTES}`, { param: "metadata" });
  }
}

/** A call as JSON must carry it: a segment's ids kept as the encode thread's Int32Array (which JSON writes as an object) become an array. */
function plainIds(call: TrackedCall): TrackedCall {
  if (!call.segments.some((s) => s.ids instanceof Int32Array)) return call;
  return { ...call, segments: call.segments.map((s) => (s.ids instanceof Int32Array ? { ...s, ids: Array.from(s.ids) } : s)) };
}

export interface EpisodeRoutesOptions {
  store: EpisodeStore;
  /** Registered-but-unclaimed episodes at most (run config `server.maxRegisteredEpisodes`); a register past it is 429. */
  maxRegistered: number;
}

/**
 * The episode lifecycle over HTTP, for a scheduler or SDK in another process (see server/README.md).
 * Running episodes takes a client token; reading what was recorded takes the admin token.
 */
export async function episodeRoutes(app: FastifyInstance, opts: EpisodeRoutesOptions): Promise<void> {
  const { store } = opts;
  const owners = episodeOwners(store);
  const client = { config: { auth: "client" } } as const;
  const admin = { config: { auth: "admin" } } as const;
  const id = (params: unknown): string => parseBody(EpisodeParamsSchema, params).id;

  app.post("/v1/episodes", client, async (request, reply) => {
    const body = parseBody(RegisterBodySchema, request.body);
    checkMetadataSize(body.metadata);
    const registered = store.list({ state: "registered" }).length;
    if (registered >= opts.maxRegistered) {
      throw new HttpError(429, "AJ_ERR_TOO_MANY_REGISTERED", `${registered} episodes are registered and unclaimed (server.maxRegisteredEpisodes); claim or abort some first`);
    }
    const input: RegisterEpisodeInput = { taskId: body.taskId, env: body.env, agents: body.agents };
    if (body.episodeId !== undefined) input.episodeId = body.episodeId;
    if (body.eval !== undefined) input.eval = body.eval;
    if (body.metadata !== undefined) input.metadata = body.metadata;
    const episode = episodeOrHttpError(store.register(input));
    owners.registered(episode.episodeId, request.agentjetCaller);
    // every transition's answer waits for its row (and an end's calls) to be in run.db (`persisted`)
    await store.persisted(episode.episodeId);
    return reply.code(201).send({ episode });
  });

  app.post("/v1/episodes/claim", client, async (request) => {
    const body = parseBody(ClaimBodySchema, request.body);
    const caller = request.agentjetCaller;
    let episodeId = body.episodeId;
    // A client token claims only episodes registered over HTTP: the scheduler's own go out over /swarm.
    if (caller?.role !== "admin") {
      if (episodeId === undefined) {
        episodeId = store.list({ state: "registered" }).find((e) => owners.claimable(e.episodeId))?.episodeId;
        if (episodeId === undefined) return store.claimsPaused() ? { kind: "paused" } : { kind: "empty" };
      } else if (store.get(episodeId)?.state === "registered" && !owners.claimable(episodeId)) {
        throw new HttpError(403, "AJ_ERR_EPISODE_NOT_YOURS", `episode '${episodeId}' belongs to the server's scheduler`);
      }
    }
    const claim: { episodeId?: string; clientId?: string } = {};
    if (episodeId !== undefined) claim.episodeId = episodeId;
    if (body.clientId !== undefined) claim.clientId = body.clientId;
    const result = store.claim(claim);
    if (result.kind === "not-found" || result.kind === "wrong-state") throw refusalToHttp(result);
    if (result.kind === "claimed") {
      owners.claimed(result.episode.episodeId, caller);
      await store.persisted(result.episode.episodeId);
    }
    return result;
  });

  /** 404 for an unknown episode, 403 for one another token holds; then the store decides the transition. */
  const owned = (request: FastifyRequest): string => {
    const episodeId = id(request.params);
    const live = store.get(episodeId);
    if (live?.state === "registered" || live?.state === "claimed") {
      owners.check(episodeId, live.state, request.agentjetCaller, callerIdentity(request), live.clientId ?? null);
    }
    return episodeId;
  };

  /**
   * The store answers not-found for an episode that is no longer live; over HTTP one that run.db holds
   * (ended, aborted) is a 409 naming its state, so a client that ends twice or ends after a reclaim
   * learns what happened instead of being told the episode never existed.
   */
  const answer = (episodeId: string, action: EpisodeAction, r: Done | EpisodeRefusal): Episode => {
    if (r.kind === "not-found") {
      const state = store.get(episodeId)?.state;
      if (state !== undefined) throw refusalToHttp({ kind: "wrong-state", episodeId, state, action });
    }
    return episodeOrHttpError(r);
  };

  app.post("/v1/episodes/:id/heartbeat", client, async (request) => {
    const episodeId = owned(request);
    return { episode: answer(episodeId, "heartbeat", store.heartbeat(episodeId)) };
  });

  app.post("/v1/episodes/:id/end", client, async (request) => {
    const body = parseBody(EndBodySchema, request.body);
    checkMetadataSize(body.metadata);
    const input = body.metadata === undefined ? { rewards: body.rewards } : { rewards: body.rewards, metadata: body.metadata };
    const episodeId = owned(request);
    const episode = answer(episodeId, "end", store.end(episodeId, input));
    await store.persisted(episodeId);
    return { episode };
  });

  app.post("/v1/episodes/:id/abort", client, async (request) => {
    const body = parseBody(AbortBodySchema, request.body);
    const episodeId = owned(request);
    const episode = answer(episodeId, "abort", store.abort(episodeId, body.reason));
    await store.persisted(episodeId);
    return { episode };
  });

  app.get("/v1/episodes/:id", admin, async (request) => {
    const episodeId = id(request.params);
    const episode = store.get(episodeId);
    if (!episode) throw refusalToHttp({ kind: "not-found", episodeId });
    return { episode };
  });

  app.get("/v1/episodes/:id/calls", admin, async (request) => {
    const episodeId = id(request.params);
    if (!store.get(episodeId)) throw refusalToHttp({ kind: "not-found", episodeId });
    return { calls: store.tracker.callsOf(episodeId).map(plainIds) };
  });

  app.get("/v1/episodes", admin, async (request) => ({ episodes: store.list(parseBody(ListQuerySchema, request.query)) }));

  app.get("/v1/server/status", client, async () => ({ claimsPaused: store.claimsPaused(), inFlight: store.inFlight().length, registered: store.list({ state: "registered" }).length }));
}
