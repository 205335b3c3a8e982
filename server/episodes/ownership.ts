import { createHash } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { Caller } from "../app/auth.ts";
import { HttpError } from "../openai/errors.ts";
import type { EpisodeStore } from "./episode-store.ts";

/**
 * Which control-plane token registered and which claimed each episode over HTTP. Episodes the server's
 * own scheduler registered (in-process) have no entry: no client token can claim, end or abort them over
 * HTTP, so a client cannot steal or score another client's work. The admin token may do anything.
 */
export interface EpisodeOwners {
  /** Records that `caller` registered (or began) the episode. */
  registered(episodeId: string, caller: Caller | null): void;
  /** Records that `caller` claimed (or began) it. */
  claimed(episodeId: string, caller: Caller | null): void;
  /** Registered over HTTP, so HTTP clients may claim it. */
  claimable(episodeId: string): boolean;
  /**
   * Throws 403 unless `caller` may end, abort or heart-beat the episode. `clientId` is the one the store
   * recorded at the claim: `POST /v1/episodes/begin` claims in-process with the caller's identity
   * (`callerIdentity`), so an episode with no HTTP claim on record belongs to the caller it names.
   */
  check(episodeId: string, state: "registered" | "claimed", caller: Caller | null, identity: string, clientId: string | null): void;
}

/** Who a request comes from, for client ids and groups: a digest of its Authorization header (never the token). */
export function callerIdentity(request: FastifyRequest): string {
  const auth = request.headers.authorization;
  return auth ? `token-${createHash("sha256").update(auth).digest("hex").slice(0, 12)}` : "anonymous";
}

const owners = new WeakMap<EpisodeStore, EpisodeOwners>();

/** The owners of one store's episodes (one per store, shared by every route that registers or claims). */
export function episodeOwners(store: EpisodeStore): EpisodeOwners {
  const existing = owners.get(store);
  if (existing) return existing;
  const registeredBy = new Map<string, string>();
  const claimedBy = new Map<string, string>();
  const forget = (e: { episodeId: string }): void => {
    registeredBy.delete(e.episodeId);
    claimedBy.delete(e.episodeId);
  };
  store.on("ended", forget);
  store.on("aborted", forget);
  // Apps without the auth hook (test doubles) have no caller: one anonymous owner.
  const idOf = (caller: Caller | null): string => caller?.tokenId ?? "anonymous";
  const made: EpisodeOwners = {
    registered: (episodeId, caller) => void registeredBy.set(episodeId, idOf(caller)),
    claimed: (episodeId, caller) => void claimedBy.set(episodeId, idOf(caller)),
    claimable: (episodeId) => registeredBy.has(episodeId),
    check(episodeId, state, caller, identity, clientId) {
      if (caller?.role === "admin") return;
      const owner = state === "claimed" ? claimedBy.get(episodeId) : registeredBy.get(episodeId);
      const begun = owner === undefined && state === "claimed" && clientId === identity;
      if (!begun && owner !== idOf(caller)) {
        throw new HttpError(403, "AJ_ERR_EPISODE_NOT_YOURS", `episode '${episodeId}' was ${state} by another client (or by the server's scheduler)`);
      }
    },
  };
  owners.set(store, made);
  return made;
}
