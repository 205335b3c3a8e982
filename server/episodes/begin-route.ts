import type { FastifyInstance, FastifyRequest } from "fastify";
import { HttpError } from "../openai/errors.ts";
import { parseBody } from "../openai/parse-body.ts";
import type { EpisodeStore } from "./episode-store.ts";
import { callerIdentity, episodeOwners } from "./ownership.ts";
import { episodeOrHttpError } from "./refusal-http.ts";
import { checkMetadataSize } from "./routes.ts";
import { BeginBodySchema } from "./schemas.ts";

export interface BeginRouteOptions {
  store: EpisodeStore;
  /** The OpenAI base URL agents call (`http://host:port/v1`). */
  baseUrl: () => string;
  /** The policy the default agent (`main`) is bound to. */
  defaultPolicy: string;
  /**
   * Resolves true once a new episode may start (claims not paused for a weight sync, the sample pool
   * under `batching.maxCachedEpisodes`), false when it waited too long: the route then answers 503.
   */
  admit: () => Promise<boolean>;
  /** Who is calling (default: a digest of the bearer token): episodes without a groupId are grouped by it. */
  caller?: (request: FastifyRequest) => string;
}

/** Environment name of client-driven episodes that name none. */
export const CLIENT_ENV = "client";


/**
 * `POST /v1/episodes/begin`: a client that owns its dataset and agent code starts an episode for a task
 * id and gets the OpenAI base URL and one signed key per agent; it ends it with the episode routes'
 * `/end` (rewards) or `/abort`. Episodes of one (env, taskId, groupId or caller) form the GRPO group.
 */
export async function beginEpisodeRoute(app: FastifyInstance, opts: BeginRouteOptions): Promise<void> {
  const caller = opts.caller ?? callerIdentity;
  app.post("/v1/episodes/begin", { config: { auth: "client" } }, async (request, reply) => {
    const body = parseBody(BeginBodySchema, request.body);
    checkMetadataSize(body.metadata);
    const who = caller(request);
    // Admitted, the handler goes on a turn later: an episode's end in between can complete a batch and
    // pause claims for its weight sync. Then it waits again (the sync is what `admit` waits for)
    // rather than answering 503 at once; the register and claim below run in the turn that saw claims open.
    do {
      if (!(await opts.admit())) {
        throw new HttpError(503, "AJ_ERR_ENGINE_BUSY", "the engine is syncing weights or its sample pool is full; retry shortly");
      }
    } while (opts.store.claimsPaused());
    const env = body.env ?? CLIENT_ENV;
    const agents = body.agents ?? { main: { kind: "policy" as const, target: opts.defaultPolicy } };
    // The pool groups by (env, groupId): the task id is part of it, so one caller's tasks stay apart.
    const groupId = `${body.groupId ?? `caller:${who}`}/${body.taskId}`;
    const episodeId = episodeOrHttpError(
      opts.store.register({
        taskId: body.taskId,
        env,
        agents,
        ...(body.eval !== undefined ? { eval: body.eval } : {}),
        metadata: { ...body.metadata, groupId, drivenBy: who },
        // only its caller holds the task: an idle claim is aborted, never offered to another client
        whenIdle: "abort",
      }),
    ).episodeId;
    // Registered and claimed in one turn: a weight sync cannot pause claims in between.
    const claim = opts.store.claim({ episodeId, clientId: who });
    const owners = episodeOwners(opts.store);
    owners.registered(episodeId, request.agentjetCaller);
    if (claim.kind === "claimed") owners.claimed(episodeId, request.agentjetCaller);
    if (claim.kind !== "claimed") {
      opts.store.abort(episodeId, { kind: "client-lost", message: "claims paused before the claim" });
      throw new HttpError(503, "AJ_ERR_ENGINE_BUSY", "claims are paused; retry shortly");
    }
    await opts.store.persisted(episodeId);
    return reply.code(201).send({ episode: claim.episode, baseUrl: opts.baseUrl(), keys: claim.keys });
  });
}
