import { randomUUID } from "node:crypto";
import type { FailureKind } from "../../sdk/failure-kinds.ts";
import type { RunDb } from "../db/run-db.ts";
import type { CallRecord } from "../tracker/call-record.ts";
import { createTracker, type Tracker } from "../tracker/tracker.ts";
import { checkRewards, type RewardRange } from "./check-rewards.ts";
import { EpisodeExistsError, EpisodeNotFoundError, EpisodeStateError, InvalidRewardsError, UnknownBindingError } from "./errors.ts";
import type {
  AbortReason,
  Authorization,
  ClaimResult,
  EndEpisodeInput,
  Episode,
  RegisterEpisodeInput,
} from "./episode.ts";
import { createKeySigner, generateKeySecret, type KeyPayload } from "./keys.ts";
import { episodeSamplingSeed } from "./sampling-seed.ts";

const VERIFIED_CACHE = 65_536;

export interface EpisodeStoreEvents {
  registered: (episode: Episode) => void;
  claimed: (episode: Episode) => void;
  /** `calls`: the episode's trainable (policy) calls, in (agent, seq) order. */
  ended: (episode: Episode, calls: CallRecord[]) => void;
  aborted: (episode: Episode, calls: CallRecord[]) => void;
  /** An idle claim was returned to `registered`; its partial record is already discarded. */
  reclaimed: (episode: Episode) => void;
  /** The server gave up a claimed episode (a weight sync's drain timeout); `aborted` fires for it too. */
  abandoned: (episode: Episode) => void;
  /** Claims paused (a weight sync starts): `claim` answers `paused` until `resumed`. */
  paused: () => void;
  /** Claims resumed: schedulers waiting on the gate go on at once. */
  resumed: () => void;
}

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
  /** Check for idle claims on a timer (every min(10 s, timeout / 2)). Default true. */
  reclaimTimer?: boolean;
  /** Where a throwing event listener's error goes. Default console.error. */
  onListenerError?: (err: unknown) => void;
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
  register(input: RegisterEpisodeInput): Episode;
  /** Claims the given episode, or the oldest registered one. Keys: one per agent, for this attempt. */
  claim(opts?: { episodeId?: string; clientId?: string }): ClaimResult;
  heartbeat(episodeId: string): Episode;
  /**
   * Ends a claimed episode with its rewards. Rewards that break the rule of `checkRewards` abort it as
   * `protocol` instead (its calls are discarded, listeners hear `aborted`) and throw `InvalidRewardsError`.
   */
  end(episodeId: string, input: EndEpisodeInput): Episode;
  abort(episodeId: string, reason: AbortReason): Episode;
  get(episodeId: string): Episode | undefined;
  list(filter?: { state?: Episode["state"] | undefined }): Episode[];
  /** Resolves a chat call's key to its (episode, agent); refuses keys of other attempts or finished episodes. */
  authorize(key: string): Authorization;
  /** True while the key's claim is still the episode's current one (checked again before recording). */
  isCurrent(episodeId: string, attempt: number): boolean;
  /** Refreshes the idle timer (every chat call does). */
  touch(episodeId: string): void;
  /** Returns claims idle past the timeout to `registered`; the timer calls it, tests call it directly. */
  reclaimIdle(): Episode[];
  /** Claims gate for weight updates: while paused, `claim` answers `{ kind: "paused" }`. */
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

interface EpisodeRow {
  episode_id: string;
  task_id: string;
  env: string;
  state: Episode["state"];
  agents: string;
  attempt: number;
  eval: number;
  created_at: number;
  claimed_at: number | null;
  ended_at: number | null;
  rewards: string | null;
  metadata: string | null;
  abort_reason: string | null;
}

export function createEpisodeStore(opts: EpisodeStoreOptions): EpisodeStore {
  const now = opts.now ?? Date.now;
  const idleMs = (opts.idleTimeoutS ?? 120) * 1000;
  const keyTtlMs = (opts.keyTtlS ?? 24 * 3600) * 1000;
  const signer = createKeySigner(opts.keySecret ?? process.env.AGENTJET_KEY_SECRET ?? generateKeySecret());
  const policies = new Set(opts.policies);
  const frozen = new Set(opts.frozen ?? []);
  const tracker = createTracker(opts.db);
  const onListenerError = opts.onListenerError ?? ((err: unknown) => console.error(err));
  const episodes = new Map<string, Episode>();
  const queue = new Set<string>();
  const listeners: { [E in keyof EpisodeStoreEvents]: Set<EpisodeStoreEvents[E]> } = {
    registered: new Set(),
    claimed: new Set(),
    ended: new Set(),
    aborted: new Set(),
    reclaimed: new Set(),
    abandoned: new Set(),
    paused: new Set(),
    resumed: new Set(),
  };
  let paused = false;
  // Keys already checked (HMAC and payload), so a call pays one map lookup; bounded by clearing.
  const verified = new Map<string, KeyPayload>();

  // Episodes a previous process left unfinished cannot continue: their keys' claims are gone.
  opts.db
    .prepare(
      `UPDATE episodes SET state = 'aborted', abort_reason = ?, ended_at = ? WHERE state IN ('registered', 'claimed')`,
    )
    .run(JSON.stringify({ kind: "server-restart" satisfies FailureKind, message: "the server restarted while the episode was open" }), now());

  const upsert = opts.db.prepare(
    `INSERT INTO episodes (episode_id, task_id, env, state, agents, attempt, eval, created_at, claimed_at, ended_at,
       rewards, metadata, abort_reason)
     VALUES (@episode_id, @task_id, @env, @state, @agents, @attempt, @eval, @created_at, @claimed_at, @ended_at,
       @rewards, @metadata, @abort_reason)
     ON CONFLICT (episode_id) DO UPDATE SET state = excluded.state, attempt = excluded.attempt,
       claimed_at = excluded.claimed_at, ended_at = excluded.ended_at, rewards = excluded.rewards,
       metadata = excluded.metadata, abort_reason = excluded.abort_reason`,
  );
  const selectOne = opts.db.prepare<[string], EpisodeRow>("SELECT * FROM episodes WHERE episode_id = ?");

  const persist = (e: Episode): void => {
    const row: EpisodeRow = {
      episode_id: e.episodeId,
      task_id: e.taskId,
      env: e.env,
      state: e.state,
      agents: JSON.stringify(e.agents),
      attempt: e.attempt,
      eval: e.eval ? 1 : 0,
      created_at: e.createdAt,
      claimed_at: e.claimedAt,
      ended_at: e.endedAt,
      rewards: e.rewards === null ? null : JSON.stringify(e.rewards),
      metadata: JSON.stringify(e.metadata),
      abort_reason: e.abortReason === null ? null : JSON.stringify(e.abortReason),
    };
    upsert.run(row);
  };

  const emit = <E extends keyof EpisodeStoreEvents>(event: E, ...args: Parameters<EpisodeStoreEvents[E]>): void => {
    for (const l of listeners[event]) {
      try {
        (l as (...a: Parameters<EpisodeStoreEvents[E]>) => void)(...args);
      } catch (err) {
        onListenerError(err);
      }
    }
  };

  const snapshot = (e: Episode): Episode => structuredClone(e);

  const mustGet = (episodeId: string): Episode => {
    const e = episodes.get(episodeId);
    if (!e) throw new EpisodeNotFoundError(episodeId);
    return e;
  };

  const finish = (e: Episode): CallRecord[] => {
    queue.delete(e.episodeId);
    const calls = tracker
      .callsOf(e.episodeId)
      .filter((c) => c.trainable)
      .map(({ trainable: _trainable, ...call }) => call);
    tracker.release(e.episodeId);
    return calls;
  };

  const fromRow = (r: EpisodeRow): Episode => ({
    episodeId: r.episode_id,
    taskId: r.task_id,
    env: r.env,
    eval: r.eval === 1,
    state: r.state,
    agents: JSON.parse(r.agents) as Episode["agents"],
    attempt: r.attempt,
    clientId: null,
    createdAt: r.created_at,
    claimedAt: r.claimed_at,
    lastActivityAt: null,
    endedAt: r.ended_at,
    rewards: r.rewards === null ? null : (JSON.parse(r.rewards) as Record<string, number>),
    metadata: r.metadata === null ? {} : (JSON.parse(r.metadata) as Record<string, unknown>),
    abortReason: r.abort_reason === null ? null : (JSON.parse(r.abort_reason) as AbortReason),
    samplingSeed: null,
  });

  const store: EpisodeStore = {
    tracker,
    register(input) {
      const episodeId = input.episodeId ?? randomUUID();
      if (episodes.has(episodeId) || selectOne.get(episodeId)) throw new EpisodeExistsError(episodeId);
      for (const [agentId, b] of Object.entries(input.agents)) {
        if (!(b.kind === "policy" ? policies : frozen).has(b.target)) throw new UnknownBindingError(agentId, b.target);
      }
      const e: Episode = {
        episodeId,
        taskId: input.taskId,
        env: input.env,
        eval: input.eval ?? false,
        state: "registered",
        agents: structuredClone(input.agents),
        attempt: 0,
        clientId: null,
        createdAt: now(),
        claimedAt: null,
        lastActivityAt: null,
        endedAt: null,
        rewards: null,
        metadata: structuredClone(input.metadata ?? {}),
        abortReason: null,
        samplingSeed: opts.samplingSeed === undefined ? null : episodeSamplingSeed(opts.samplingSeed, input.samplingKey ?? episodeId),
      };
      episodes.set(episodeId, e);
      queue.add(episodeId);
      persist(e);
      emit("registered", snapshot(e));
      return snapshot(e);
    },
    claim(o = {}) {
      if (paused) return { kind: "paused" };
      let id = o.episodeId;
      if (id === undefined) {
        id = queue.values().next().value;
        if (id === undefined) return { kind: "empty" };
      }
      const e = mustGet(id);
      if (e.state !== "registered") throw new EpisodeStateError(id, e.state, "claim");
      queue.delete(id);
      e.state = "claimed";
      e.attempt += 1;
      e.clientId = o.clientId ?? null;
      e.claimedAt = now();
      e.lastActivityAt = e.claimedAt;
      persist(e);
      const exp = e.claimedAt + keyTtlMs;
      const keys: Record<string, string> = {};
      for (const [agentId, b] of Object.entries(e.agents)) {
        keys[agentId] = signer.sign({ episodeId: id, agentId, kind: b.kind, target: b.target, attempt: e.attempt, exp });
      }
      emit("claimed", snapshot(e));
      return { kind: "claimed", episode: snapshot(e), keys };
    },
    heartbeat(episodeId) {
      const e = mustGet(episodeId);
      if (e.state !== "claimed") throw new EpisodeStateError(episodeId, e.state, "heartbeat");
      e.lastActivityAt = now();
      return snapshot(e);
    },
    end(episodeId, input) {
      const e = mustGet(episodeId);
      if (e.state !== "claimed") throw new EpisodeStateError(episodeId, e.state, "end");
      const refused = checkRewards(e, input.rewards, opts.rewardRanges?.get(e.env));
      if (refused !== null) {
        store.abort(episodeId, { kind: "protocol" satisfies FailureKind, message: refused });
        throw new InvalidRewardsError(episodeId, refused);
      }
      const calls = finish(e);
      e.state = "ended";
      e.endedAt = now();
      e.rewards = { ...input.rewards };
      e.metadata = { ...e.metadata, ...structuredClone(input.metadata ?? {}) };
      persist(e);
      episodes.delete(episodeId);
      emit("ended", snapshot(e), calls);
      return snapshot(e);
    },
    abort(episodeId, reason) {
      const e = mustGet(episodeId);
      if (e.state !== "claimed" && e.state !== "registered") throw new EpisodeStateError(episodeId, e.state, "abort");
      const calls = finish(e);
      e.state = "aborted";
      e.endedAt = now();
      e.abortReason = { kind: reason.kind, message: reason.message };
      persist(e);
      episodes.delete(episodeId);
      emit("aborted", snapshot(e), calls);
      return snapshot(e);
    },
    get(episodeId) {
      const e = episodes.get(episodeId);
      if (e) return snapshot(e);
      const row = selectOne.get(episodeId);
      return row ? fromRow(row) : undefined;
    },
    list(filter = {}) {
      return [...episodes.values()].filter((e) => !filter.state || e.state === filter.state).map(snapshot);
    },
    authorize(key) {
      let p = verified.get(key);
      if (p === undefined) {
        const v = signer.verify(key, now());
        if (v.kind === "invalid") return { kind: "unauthorized", message: "invalid API key" };
        if (v.kind === "expired") return { kind: "unauthorized", message: "API key expired" };
        p = v.payload;
        if (verified.size >= VERIFIED_CACHE) verified.clear();
        verified.set(key, p);
      } else if (p.exp <= now()) {
        return { kind: "unauthorized", message: "API key expired" };
      }
      const e = episodes.get(p.episodeId);
      if (!e) {
        const row = selectOne.get(p.episodeId);
        if (!row) return { kind: "unauthorized", message: "API key names an unknown episode" };
        return { kind: "conflict", message: `episode '${p.episodeId}' is ${row.state}` };
      }
      const binding = e.agents[p.agentId];
      if (!binding || binding.kind !== p.kind || binding.target !== p.target) {
        return { kind: "unauthorized", message: "API key does not match the episode's agents" };
      }
      if (e.state !== "claimed" || e.attempt !== p.attempt) {
        return { kind: "conflict", message: `episode '${p.episodeId}' was reclaimed; this key's claim is over` };
      }
      return { kind: "ok", episode: { ...e }, agentId: p.agentId, binding };
    },
    isCurrent(episodeId, attempt) {
      const e = episodes.get(episodeId);
      return e !== undefined && e.state === "claimed" && e.attempt === attempt;
    },
    touch(episodeId) {
      const e = episodes.get(episodeId);
      if (e && e.state === "claimed") e.lastActivityAt = now();
    },
    reclaimIdle() {
      const t = now();
      const out: Episode[] = [];
      for (const e of episodes.values()) {
        if (e.state !== "claimed" || e.lastActivityAt === null || t - e.lastActivityAt < idleMs) continue;
        tracker.discard(e.episodeId);
        e.state = "registered";
        e.clientId = null;
        e.claimedAt = null;
        e.lastActivityAt = null;
        queue.add(e.episodeId);
        persist(e);
        out.push(snapshot(e));
      }
      for (const e of out) emit("reclaimed", e);
      return out;
    },
    pauseClaims() {
      if (paused) return;
      paused = true;
      emit("paused");
    },
    resumeClaims() {
      if (!paused) return;
      paused = false;
      emit("resumed");
    },
    claimsPaused() {
      return paused;
    },
    inFlight() {
      return [...episodes.values()].filter((e) => e.state === "claimed").map((e) => e.episodeId);
    },
    abandon(episodeIds, message = "abandoned by the server during a weight update") {
      return episodeIds
        .filter((id) => episodes.get(id)?.state === "claimed")
        .map((id) => {
          const e = store.abort(id, { kind: "abandoned" satisfies FailureKind, message });
          emit("abandoned", e);
          return e;
        });
    },
    on(event, listener) {
      listeners[event].add(listener);
      return () => {
        listeners[event].delete(listener);
      };
    },
    close() {
      if (timer) clearInterval(timer);
      tracker.close();
    },
  };

  const timer = opts.reclaimTimer === false ? null : setInterval(() => store.reclaimIdle(), Math.min(10_000, idleMs / 2));
  timer?.unref();
  return store;
}
