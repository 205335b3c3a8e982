import { randomUUID } from "node:crypto";
import type { FailureKind } from "../../sdk/failure-kinds.ts";
import type { RunDb } from "../db/run-db.ts";
import { type CallRecord, toCallRecord } from "../tracker/call-record.ts";
import { createTracker, type Tracker } from "../tracker/tracker.ts";
import { checkRewards, type RewardRange } from "./check-rewards.ts";
import { createClaimKeys } from "./claim-keys.ts";
import { createClaimsGate } from "./claims-gate.ts";
import type { AbortReason, EndEpisodeInput, Episode, RegisterEpisodeInput } from "./episode.ts";
import { openEpisodeRows } from "./episode-rows.ts";
import { generateKeySecret } from "./keys.ts";
import type { Authorization, ChangeResult, ClaimResult, EndResult, NotFound, RegisterResult } from "./outcomes.ts";
import { startReclaimTimer } from "./reclaim-timer.ts";
import { episodeSamplingSeed } from "./sampling-seed.ts";
import { abortEpisode, claimEpisode, endEpisode, isIdle, reclaimEpisode, refuseActivity, registeredEpisode } from "./state-machine.ts";
import { createStoreEvents, type EpisodeStoreEvents } from "./store-events.ts";

export interface EpisodeStoreOptions {
  db: RunDb;
  /** HMAC secret for keys. Default: `$AGENTJET_KEY_SECRET`, else random (keys die with the process). */
  keySecret?: string;
  /** Claimed episodes idle longer than this return to `registered`. Default 120. */
  idleTimeoutS?: number;
  /** Key lifetime from its claim. Default 24 h. */
  keyTtlS?: number;
  /** Policy and frozen model names agents may be bound to; unknown names fail `register`. */
  policies: readonly string[];
  frozen?: readonly string[];
  /** Clock, ms. Default `Date.now`. */
  now?: () => number;
  /** Check for idle claims on a timer (`reclaim-timer.ts`). Default true. */
  reclaimTimer?: boolean;
  /** Where a throwing event listener's error goes. Default console.error. */
  onListenerError?: (err: unknown) => void;
  /** Where a failure to record calls and rows in run.db goes when no request waits for it (found by the tracker's batch timer), said once. Default console.error. */
  onRecordingError?: (err: unknown) => void;
  /**
   * Declared reward ranges by environment name (manifests' `reward`); the owner may add entries as
   * environments become known. `end` refuses rewards outside them. Default: none (finiteness only).
   */
  rewardRanges?: ReadonlyMap<string, RewardRange>;
  /**
   * Deterministic mode: the run's seed. Every episode then gets a sampling seed from it and its
   * `samplingKey` (`sampling-seed.ts`), and policy calls that bring no seed of their own sample with one
   * derived from it. Default: none (calls sample from the engine's own stream).
   */
  samplingSeed?: number;
}

export interface EpisodeStore {
  readonly tracker: Tracker;
  /** Registers an episode; `exists` for a taken id, `unknown-binding` for an agent bound to no known model. */
  register(input: RegisterEpisodeInput): RegisterResult;
  /** Claims the given episode, or the oldest registered one. Keys: one per agent, for this attempt. */
  claim(opts?: { episodeId?: string; clientId?: string }): ClaimResult;
  /** Keeps a claimed episode from idle reclaim. */
  heartbeat(episodeId: string): ChangeResult;
  /**
   * Resolves once the episode's transitions so far (and, ended, its calls) are in run.db: on a file they
   * are committed on the tracker's writer thread, soon after; in memory, at once. An HTTP answer about a
   * transition waits here, so what a client was told is durable, and what it reads next shows it.
   */
  persisted(episodeId: string): Promise<void>;
  /**
   * Ends a claimed episode with its rewards. Rewards that break the rule of `checkRewards` abort it as
   * `protocol` instead (its calls are discarded, listeners hear `aborted`): `rewards-refused`.
   */
  end(episodeId: string, input: EndEpisodeInput): EndResult;
  /** Aborts a registered or claimed episode. */
  abort(episodeId: string, reason: AbortReason): ChangeResult;
  get(episodeId: string): Episode | undefined;
  list(filter?: { state?: Episode["state"] | undefined }): Episode[];
  /**
   * Resolves a chat call's key to its (episode, agent); refuses keys of other attempts or finished
   * episodes. The episode is the store's live record, not a copy: its state never changes (a transition
   * makes a new record), its `lastActivityAt` moves with activity.
   */
  authorize(key: string): Authorization;
  /** True while the key's claim is still the episode's current one (checked again before recording). */
  isCurrent(episodeId: string, attempt: number): boolean;
  /** Refreshes the idle timer (every chat call does). */
  touch(episodeId: string): void;
  /** Returns claims idle past the timeout to `registered`; the timer calls it, tests call it directly. */
  reclaimIdle(): Episode[];
  /** Claims gate for weight updates (`claims-gate.ts`): while paused, `claim` answers `{ kind: "paused" }`. */
  pauseClaims(): void;
  resumeClaims(): void;
  claimsPaused(): boolean;
  /** Ids of episodes claimed and not yet ended, aborted or reclaimed. */
  inFlight(): string[];
  /**
   * Gives up claimed episodes (a weight update's drain timeout): they are aborted with reason kind
   * `abandoned`; ids that are no longer claimed are skipped.
   */
  abandon(episodeIds: readonly string[], message?: string): Episode[];
  on<E extends keyof EpisodeStoreEvents>(event: E, listener: EpisodeStoreEvents[E]): () => void;
  close(): void;
}

/** A copy for callers: they may change what they get without changing the store's record. */
const snapshot = (e: Episode): Episode => structuredClone(e);

/**
 * The episode store: live episodes in memory, every transition written to `run.db` (`episode-rows.ts`),
 * the pure state machine (`state-machine.ts`), keys (`claim-keys.ts`), the claims gate, idle reclaim and
 * events. Expected outcomes are values (`outcomes.ts`); storage failures throw `EpisodeStorageError`.
 */
export function createEpisodeStore(opts: EpisodeStoreOptions): EpisodeStore {
  const now = opts.now ?? Date.now;
  const idleMs = (opts.idleTimeoutS ?? 120) * 1000;
  const policies = new Set(opts.policies);
  const frozen = new Set(opts.frozen ?? []);
  const tracker = createTracker(opts.db, opts.onRecordingError);
  const events = createStoreEvents(opts.onListenerError ?? ((err: unknown) => console.error(err)));
  // on a file, episode rows go to the writer thread with the calls (`openEpisodeRows`)
  const rows = openEpisodeRows(opts.db, now(), tracker.deferred ? tracker.persistEpisode : undefined, () => events.emit("persisted"));
  const gate = createClaimsGate(events);
  /**
   * Registered and claimed episodes. A transition replaces the record; only activity (`lastActivityAt`)
   * is stamped in place, so a chat call copies nothing.
   */
  const episodes = new Map<string, Episode>();
  /** Registered episodes' ids, oldest first. */
  const queue = new Set<string>();
  const keys = createClaimKeys({
    secret: opts.keySecret ?? process.env.AGENTJET_KEY_SECRET ?? generateKeySecret(),
    ttlMs: (opts.keyTtlS ?? 24 * 3600) * 1000,
    live: (episodeId) => episodes.get(episodeId),
    persistedState: (episodeId) => rows.stateOf(episodeId),
  });

  const notFound = (episodeId: string): NotFound => ({ kind: "not-found", episodeId });

  /**
   * Writes a transition's record and makes it the live one. In memory the database is written first (a
   * failure leaves memory as it was); on a file the row goes with the next batch of calls, and is read
   * from memory until it is committed.
   */
  const commit = (e: Episode): void => {
    rows.save(e);
    episodes.set(e.episodeId, e);
  };

  /** Writes a finished episode, forgets it, and returns its trainable calls. */
  /** Live episodes whose idle claim is aborted, not registered again (`RegisterEpisodeInput.whenIdle`). */
  const abortWhenIdle = new Set<string>();
  const finish = (e: Episode): CallRecord[] => {
    const calls = tracker
      .callsOf(e.episodeId)
      .filter((c) => c.trainable)
      .map(toCallRecord);
    rows.save(e);
    queue.delete(e.episodeId);
    episodes.delete(e.episodeId);
    abortWhenIdle.delete(e.episodeId);
    tracker.release(e.episodeId);
    return calls;
  };

  /** Aborts a live episode: writes it, forgets it, tells listeners. */
  const abortLive = (current: Episode, reason: AbortReason): ChangeResult => {
    const t = abortEpisode(current, reason, now());
    if (t.kind !== "ok") return t;
    const calls = finish(t.episode);
    events.emit("aborted", snapshot(t.episode), calls);
    return { kind: "ok", episode: snapshot(t.episode) };
  };

  const store: EpisodeStore = {
    tracker,
    register(input) {
      const episodeId = input.episodeId ?? randomUUID();
      if (episodes.has(episodeId) || rows.stateOf(episodeId) !== undefined) return { kind: "exists", episodeId };
      for (const [agentId, b] of Object.entries(input.agents)) {
        if (!(b.kind === "policy" ? policies : frozen).has(b.target)) {
          const otherKind = (b.kind === "policy" ? frozen : policies).has(b.target);
          return { kind: "unknown-binding", agentId, target: b.target, as: b.kind, otherKind };
        }
      }
      const seed = opts.samplingSeed === undefined ? null : episodeSamplingSeed(opts.samplingSeed, input.samplingKey ?? episodeId);
      const e = registeredEpisode(input, episodeId, now(), seed);
      if (input.whenIdle === "abort") abortWhenIdle.add(episodeId);
      commit(e);
      queue.add(episodeId);
      events.emit("registered", snapshot(e));
      return { kind: "ok", episode: snapshot(e) };
    },
    claim(o = {}) {
      if (gate.paused()) return { kind: "paused" };
      const id = o.episodeId ?? queue.values().next().value;
      if (id === undefined) return { kind: "empty" };
      const current = episodes.get(id);
      if (!current) return notFound(id);
      const t = claimEpisode(current, o.clientId ?? null, now());
      if (t.kind !== "ok") return t;
      commit(t.episode);
      queue.delete(id);
      const issued = keys.issue(t.episode);
      events.emit("claimed", snapshot(t.episode));
      return { kind: "claimed", episode: snapshot(t.episode), keys: issued };
    },
    async persisted(episodeId) {
      await Promise.all([rows.persisted(episodeId), tracker.committed(episodeId)]);
    },
    heartbeat(episodeId) {
      const current = episodes.get(episodeId);
      if (!current) return notFound(episodeId);
      const refused = refuseActivity(current);
      if (refused !== null) return refused;
      current.lastActivityAt = now();
      return { kind: "ok", episode: snapshot(current) };
    },
    end(episodeId, input) {
      const current = episodes.get(episodeId);
      if (!current) return notFound(episodeId);
      const t = endEpisode(current, input, now());
      if (t.kind !== "ok") return t;
      const refused = checkRewards(current, input.rewards, opts.rewardRanges?.get(current.env));
      if (refused !== null) {
        const aborted = abortLive(current, { kind: "protocol" satisfies FailureKind, message: refused });
        return aborted.kind === "ok" ? { kind: "rewards-refused", episodeId, reason: refused, episode: aborted.episode } : aborted;
      }
      const calls = finish(t.episode);
      events.emit("ended", snapshot(t.episode), calls);
      return { kind: "ok", episode: snapshot(t.episode) };
    },
    abort(episodeId, reason) {
      const current = episodes.get(episodeId);
      return current ? abortLive(current, reason) : notFound(episodeId);
    },
    get(episodeId) {
      const e = episodes.get(episodeId);
      return e ? snapshot(e) : rows.load(episodeId);
    },
    list(filter = {}) {
      return [...episodes.values()].filter((e) => !filter.state || e.state === filter.state).map(snapshot);
    },
    authorize: (key) => keys.authorize(key, now()),
    isCurrent(episodeId, attempt) {
      const e = episodes.get(episodeId);
      return e !== undefined && e.state === "claimed" && e.attempt === attempt;
    },
    touch(episodeId) {
      const e = episodes.get(episodeId);
      if (e !== undefined && refuseActivity(e) === null) e.lastActivityAt = now();
    },
    reclaimIdle() {
      const t = now();
      const out: Episode[] = [];
      for (const e of episodes.values()) {
        if (!isIdle(e, t, idleMs)) continue;
        if (abortWhenIdle.has(e.episodeId)) {
          abortLive(e, { kind: "reclaimed" satisfies FailureKind, message: `no chat call or heartbeat for ${idleMs / 1000} s (server.idleTimeoutS)` });
          continue;
        }
        const back = reclaimEpisode(e);
        if (back.kind !== "ok") continue;
        tracker.discard(e.episodeId);
        commit(back.episode);
        queue.add(e.episodeId);
        out.push(snapshot(back.episode));
      }
      for (const e of out) events.emit("reclaimed", e);
      return out;
    },
    pauseClaims: () => gate.pause(),
    resumeClaims: () => gate.resume(),
    claimsPaused: () => gate.paused(),
    inFlight() {
      return [...episodes.values()].filter((e) => e.state === "claimed").map((e) => e.episodeId);
    },
    abandon(episodeIds, message = "abandoned by the server during a weight update") {
      const out: Episode[] = [];
      for (const id of episodeIds) {
        const current = episodes.get(id);
        if (current?.state !== "claimed") continue;
        const r = abortLive(current, { kind: "abandoned" satisfies FailureKind, message });
        if (r.kind !== "ok") continue;
        events.emit("abandoned", r.episode);
        out.push(r.episode);
      }
      return out;
    },
    on: (event, listener) => events.on(event, listener),
    close() {
      stopTimer();
      tracker.close();
    },
  };

  const stopTimer = opts.reclaimTimer === false ? () => {} : startReclaimTimer(idleMs, () => store.reclaimIdle());
  return store;
}
