import type { Episode, EpisodeState } from "./episode.ts";
import { createKeySigner, type KeyPayload } from "./keys.ts";
import type { Authorization } from "./outcomes.ts";

/** Keys verified at most this many at once; past it the cache starts over. */
const VERIFIED_CACHE = 65_536;

export interface ClaimKeysOptions {
  /** HMAC secret. */
  secret: string;
  /** Key lifetime from its claim, ms. */
  ttlMs: number;
  /** The live (registered or claimed) episode with this id. */
  live: (episodeId: string) => Episode | undefined;
  /** The persisted state of an episode that is no longer live (read only when a key names one). */
  persistedState: (episodeId: string) => EpisodeState | undefined;
}

/** The keys of claims: one per agent for one attempt, resolved to (episode, agent) on every chat call. */
export interface ClaimKeys {
  /** One key per agent of a claimed episode, for its current attempt, expiring `ttlMs` after the claim. */
  issue(e: Episode): Record<string, string>;
  /** Resolves a chat call's key; refuses keys of other attempts or finished episodes. */
  authorize(key: string, now: number): Authorization;
}

export function createClaimKeys(opts: ClaimKeysOptions): ClaimKeys {
  const signer = createKeySigner(opts.secret);
  // Keys already checked (HMAC and payload), so a call pays one map lookup; bounded by clearing.
  const verified = new Map<string, KeyPayload>();

  /** The key's payload, or why it is refused. */
  const verify = (key: string, now: number): KeyPayload | string => {
    const known = verified.get(key);
    if (known !== undefined) return known.exp <= now ? "API key expired" : known;
    const v = signer.verify(key, now);
    if (v.kind === "invalid") return "invalid API key";
    if (v.kind === "expired") return "API key expired";
    if (verified.size >= VERIFIED_CACHE) verified.clear();
    verified.set(key, v.payload);
    return v.payload;
  };

  return {
    issue(e) {
      const exp = (e.claimedAt ?? 0) + opts.ttlMs;
      const keys: Record<string, string> = {};
      for (const [agentId, b] of Object.entries(e.agents)) {
        keys[agentId] = signer.sign({ episodeId: e.episodeId, agentId, kind: b.kind, target: b.target, attempt: e.attempt, exp });
      }
      return keys;
    },
    authorize(key, now) {
      const payload = verify(key, now);
      if (typeof payload === "string") return { kind: "unauthorized", message: payload };
      const e = opts.live(payload.episodeId);
      if (!e) {
        const state = opts.persistedState(payload.episodeId);
        if (state === undefined) return { kind: "unauthorized", message: "API key names an unknown episode" };
        return { kind: "conflict", message: `episode '${payload.episodeId}' is ${state}` };
      }
      const binding = e.agents[payload.agentId];
      if (!binding || binding.kind !== payload.kind || binding.target !== payload.target) {
        return { kind: "unauthorized", message: "API key does not match the episode's agents" };
      }
      if (e.state !== "claimed" || e.attempt !== payload.attempt) {
        return { kind: "conflict", message: `episode '${payload.episodeId}' was reclaimed; this key's claim is over` };
      }
      return { kind: "ok", episode: e, agentId: payload.agentId, binding };
    },
  };
}
