import type { FastifyInstance } from "fastify";
import { HttpError, unauthorized } from "../openai/errors.ts";
import { parseBody } from "../openai/parse-body.ts";
import type { RegisterEpisodeInput } from "./episode.ts";
import type { EpisodeStore } from "./episode-store.ts";
import { EpisodeExistsError, EpisodeNotFoundError, EpisodeStateError, UnknownBindingError } from "./errors.ts";
import {
  AbortBodySchema,
  ClaimBodySchema,
  EndBodySchema,
  EpisodeParamsSchema,
  ListQuerySchema,
  RegisterBodySchema,
} from "./schemas.ts";

/** Store errors as HTTP: unknown episode 404, a refused transition or a duplicate 409, a bad binding 400. */
function toHttp(err: unknown): unknown {
  if (err instanceof EpisodeNotFoundError) return new HttpError(404, err.code, err.message, { cause: err });
  if (err instanceof EpisodeStateError || err instanceof EpisodeExistsError) return new HttpError(409, err.code, err.message, { cause: err });
  if (err instanceof UnknownBindingError) return new HttpError(400, err.code, err.message, { param: "agents", cause: err });
  return err;
}

function run<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw toHttp(err);
  }
}

/** The episode lifecycle over HTTP, for a scheduler or SDK in another process (see server/README.md). */
export async function episodeRoutes(app: FastifyInstance, opts: { store: EpisodeStore; adminToken?: string }): Promise<void> {
  const { store } = opts;
  if (opts.adminToken !== undefined) {
    const expected = `Bearer ${opts.adminToken}`;
    app.addHook("onRequest", async (request) => {
      if (request.headers.authorization !== expected) throw unauthorized("episode routes need the admin token");
    });
  }
  const id = (params: unknown): string => parseBody(EpisodeParamsSchema, params).id;

  app.post("/v1/episodes", async (request, reply) => {
    const body = parseBody(RegisterBodySchema, request.body);
    const input: RegisterEpisodeInput = { taskId: body.taskId, env: body.env, agents: body.agents };
    if (body.episodeId !== undefined) input.episodeId = body.episodeId;
    if (body.eval !== undefined) input.eval = body.eval;
    if (body.metadata !== undefined) input.metadata = body.metadata;
    const episode = run(() => store.register(input));
    return reply.code(201).send({ episode });
  });

  app.post("/v1/episodes/claim", async (request) => {
    const body = parseBody(ClaimBodySchema, request.body ?? {});
    const claim: { episodeId?: string; clientId?: string } = {};
    if (body.episodeId !== undefined) claim.episodeId = body.episodeId;
    if (body.clientId !== undefined) claim.clientId = body.clientId;
    return run(() => store.claim(claim));
  });

  app.post("/v1/episodes/:id/heartbeat", async (request) => ({ episode: run(() => store.heartbeat(id(request.params))) }));

  app.post("/v1/episodes/:id/end", async (request) => {
    const body = parseBody(EndBodySchema, request.body);
    const input = body.metadata === undefined ? { rewards: body.rewards } : { rewards: body.rewards, metadata: body.metadata };
    return { episode: run(() => store.end(id(request.params), input)) };
  });

  app.post("/v1/episodes/:id/abort", async (request) => {
    const body = parseBody(AbortBodySchema, request.body);
    return { episode: run(() => store.abort(id(request.params), body.reason)) };
  });

  app.get("/v1/episodes/:id", async (request) => {
    const episodeId = id(request.params);
    const episode = store.get(episodeId);
    if (!episode) throw toHttp(new EpisodeNotFoundError(episodeId));
    return { episode };
  });

  app.get("/v1/episodes/:id/calls", async (request) => {
    const episodeId = id(request.params);
    if (!store.get(episodeId)) throw toHttp(new EpisodeNotFoundError(episodeId));
    return { calls: store.tracker.callsOf(episodeId) };
  });

  app.get("/v1/episodes", async (request) => ({ episodes: store.list(parseBody(ListQuerySchema, request.query)) }));

  app.get("/v1/server/status", async () => ({ claimsPaused: store.claimsPaused(), inFlight: store.inFlight().length, registered: store.list({ state: "registered" }).length }));
}
