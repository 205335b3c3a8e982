import type { CodeVersion } from "../../sdk/swarm/protocol.ts";
import type { ClientDirectory } from "./client-directory.ts";
import { matchEnvironment } from "./match-environments.ts";
import type { AbortReason, ClaimOutcome, EpisodeRegistry } from "./port.ts";
import type { ClientState, EnvLane, Slot } from "./slots.ts";
import type { Group } from "./slots.ts";
import type { Counters, EpisodeResult, GroupScorer, SchedulerEnvironment, SchedulerEvent } from "./types.ts";

export interface DispatcherDeps {
  registry: EpisodeRegistry;
  clients: ClientDirectory;
  lanes: readonly EnvLane[];
  counters: Counters;
  /** The OpenAI base URL agents call, ending in /v1. */
  baseUrl: () => string;
  /** `-r<k>` for the k-th resume, "" for the first start: part of every episode id. */
  sessionTag: string;
  /** Retries of an infrastructure-failed episode before its group fails. */
  infraRetries: number;
  /** False before `start` and after `close`: nothing is dispatched. */
  running: () => boolean;
  /** False while the trainer wants no new episodes (pool at `maxCachedEpisodes`, a sync under way). */
  canSchedule: () => boolean;
  /**
   * Deterministic mode: asked before the first slot of a batch is dispatched; false holds the batch
   * (the previous one has not trained yet). Absent: batches start as soon as clients are free.
   */
  mayStartBatch?: () => boolean;
  /** Runs before each dispatch round (plans batches ahead). */
  beforePump: () => void;
  /** A slot reached done or failed. */
  settle: (slot: Slot) => void;
  emit: (event: SchedulerEvent) => void;
  /** The group scorer of an environment whose rewards are group-relative (a group judge), if any. */
  groupScorer?: (env: string) => GroupScorer | undefined;
  /** Milliseconds clock (heart-beats of claims held for a group scorer). */
  now?: () => number;
}

/** Claims held for a group scorer are heart-beaten at most this often (they have no client any more). */
const HELD_HEARTBEAT_MS = 5_000;

/**
 * Dispatch and retries: hands queued slots to free capable clients (oldest batch first, retries and
 * evaluation ahead), registers and claims each try under a fresh episode id, turns results into
 * settled slots, and re-queues failed tries until their retries run out.
 */
export class Dispatcher {
  readonly #d: DispatcherDeps;
  readonly #byEpisode = new Map<string, Slot>();
  /** Claims are paused in the store (a weight sync): nothing is dispatched until they resume. */
  #paused = false;
  #pumping = false;
  /** Ended on their clients, waiting for their group's scorer: the client's result per slot. */
  readonly #judging = new Map<Slot, EpisodeResult>();
  /** Aborted once everything is aborted (the scheduler closing): group scorers still judging stop. */
  readonly #closing = new AbortController();
  #heldBeat = 0;

  constructor(deps: DispatcherDeps) {
    this.#d = deps;
  }

  inFlight(): number {
    return this.#byEpisode.size;
  }

  /** Episodes ended on their clients and held, claims open, until their group's scorer has run. */
  heldForScoring(): Set<string> {
    const out = new Set<string>();
    for (const s of this.#judging.keys()) if (s.state === "judging" && s.episodeId) out.add(s.episodeId);
    return out;
  }

  /** The store resumed claims (or the lease tick wants another look). */
  unpause(): void {
    this.#paused = false;
  }

  /** Dispatches while there are queued slots and free clients for them. */
  pump(): void {
    if (this.#pumping || !this.#d.running()) return;
    this.#pumping = true;
    try {
      this.#d.beforePump();
      this.#beatHeld();
      if (this.#paused) return;
      for (;;) {
        // Checked before each registration: while claims are paused nothing is registered (no junk rows).
        if (!this.#d.canSchedule() || this.#d.registry.claimsPaused?.()) return;
        let best: { env: EnvLane; slot: Slot; seq: number } | null = null;
        for (const env of this.#d.lanes) {
          let head = env.queue.peek();
          while (head && head.state !== "queued") {
            env.queue.shift();
            head = env.queue.peek();
          }
          if (!head || !this.#d.clients.hasFreeClient(env)) continue;
          const batch = head.group?.batch;
          if (batch && !batch.started && this.#d.mayStartBatch && !this.#d.mayStartBatch()) continue;
          const seq = head.failures.length > 0 ? -1 : seqOf(head);
          if (!best || seq < best.seq) best = { env, slot: head, seq };
        }
        if (!best) return;
        best.env.queue.shift();
        if (best.slot.group) best.slot.group.batch.started = true;
        const client = this.#d.clients.pickClient(best.env)!;
        void this.#assign(best.slot, client);
      }
    } finally {
      this.#pumping = false;
    }
  }

  /** A client's heartbeat keeps its running episodes from idle reclaim. */
  heartbeat(client: ClientState, running: readonly string[]): void {
    for (const id of running) {
      const slot = this.#byEpisode.get(id);
      if (slot?.client === client && slot.state === "running") this.#d.registry.heartbeat(id);
    }
  }

  async end(client: ClientState, episodeId: string, rewards: Record<string, number>, info: Record<string, unknown>, code?: CodeVersion): Promise<void> {
    const slot = this.#byEpisode.get(episodeId);
    if (!slot || slot.client !== client || slot.state !== "running") {
      this.#d.counters.staleResults += 1;
      return;
    }
    const refused = code ? refusedCode(slot.env.config, code) : null;
    if (refused) {
      // Assigned before the client's re-announce of edited code reached us, run with that code: not this run's.
      this.failAttempt(slot, { kind: "protocol", message: refused });
      this.pump();
      return;
    }
    const result: EpisodeResult = { episodeId, attempt: slot.attempt, clientId: client.id, rewards, info, ...(code ? { code } : {}) };
    const scorer = slot.group && slot.purpose === "train" ? this.#d.groupScorer?.(slot.env.config.name) : undefined;
    if (scorer && slot.group) {
      // The client is done with it; the claim stays open (the store ends it with the group's rewards).
      slot.state = "judging";
      slot.client?.slots.delete(slot);
      slot.client = null;
      this.#judging.set(slot, result);
      void this.#scoreGroup(slot.group, scorer);
      this.pump();
      return;
    }
    await this.#finish(slot, result);
  }

  /** Ends a slot's episode in the store with `result`, then reports and settles it. */
  async #finish(slot: Slot, result: EpisodeResult): Promise<void> {
    const { episodeId } = result;
    slot.state = "done";
    slot.result = result;
    this.#release(slot);
    this.#d.counters.ended += 1;
    try {
      await this.#d.registry.end(episodeId, result.rewards, result.info, result.code);
    } catch (err) {
      slot.state = "queued";
      slot.result = null;
      this.#d.counters.ended -= 1;
      this.#retryOrFail(slot, { kind: "protocol", message: `ending the episode failed: ${String(err)}` }, episodeId, result.clientId);
      this.pump();
      return;
    }
    const trained = Object.fromEntries(slot.seats.agents.filter((a) => a.target.kind === "policy").map((a) => [a.agentId, a.role]));
    this.#d.emit({ type: "episode-end", env: slot.env.config.name, taskId: slot.task.id, purpose: slot.purpose, trained, result });
    this.#d.settle(slot);
    this.pump();
  }

  /**
   * Once no slot of the group is queued or running, scores the held ones with the group scorer (the ended
   * ones are shown to it too) and ends them; a scorer failure retries the held ones as `reward-model`.
   */
  async #scoreGroup(group: Group, scorer: GroupScorer): Promise<void> {
    if (group.status !== "running" || !group.slots.every((s) => s.state === "judging" || s.state === "done")) return;
    const held = group.slots.filter((s) => s.state === "judging" && this.#judging.has(s));
    if (held.length === 0) return;
    const episodes = group.slots.map((s) => {
      const r = s.state === "judging" ? this.#judging.get(s)! : s.result!;
      return { episodeId: r.episodeId, rewards: r.rewards };
    });
    let scored: Array<{ rewards: Record<string, number>; info: Record<string, unknown> }>;
    try {
      scored = await scorer.score({ env: group.env.config.name, task: group.task, episodes, signal: this.#closing.signal });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      for (const s of held) {
        this.#judging.delete(s);
        if (s.state === "judging") this.failAttempt(s, { kind: "reward-model", message });
      }
      this.pump();
      return;
    }
    await Promise.all(
      held.map((s) => {
        const result = this.#judging.get(s);
        this.#judging.delete(s);
        // Cancelled meanwhile (its group failed, the scheduler closed): nothing to end.
        if (!result || s.state !== "judging") return undefined;
        const i = group.slots.indexOf(s);
        const out = scored[i]!;
        return this.#finish(s, { ...result, rewards: out.rewards, info: { ...result.info, ...out.info } });
      }),
    );
  }

  /** Keeps claims held for a group scorer from idle reclaim (their clients no longer heart-beat them). */
  #beatHeld(): void {
    if (this.#judging.size === 0) return;
    const now = (this.#d.now ?? Date.now)();
    if (now - this.#heldBeat < HELD_HEARTBEAT_MS) return;
    this.#heldBeat = now;
    for (const s of this.#judging.keys()) if (s.state === "judging" && s.episodeId) this.#d.registry.heartbeat(s.episodeId);
  }

  abort(client: ClientState, episodeId: string, reason: AbortReason): void {
    const slot = this.#byEpisode.get(episodeId);
    if (!slot || slot.client !== client || slot.state !== "running") {
      this.#d.counters.staleResults += 1;
      return;
    }
    this.failAttempt(slot, reason);
    this.pump();
  }

  /** Ends the current attempt without a result: abort it in the store, then retry or give up. */
  failAttempt(slot: Slot, reason: AbortReason): void {
    const episodeId = slot.episodeId ?? slot.id;
    const clientId = slot.client?.id ?? null;
    if (slot.episodeId) void this.#safeAbort(slot.episodeId, reason);
    this.#release(slot);
    this.#d.counters.aborted += 1;
    if (reason.kind === "client-lost") this.#d.counters.lost += 1;
    this.#retryOrFail(slot, reason, episodeId, clientId);
  }

  /**
   * The store gave an episode up on its own: tell the client, retry elsewhere. The reason names what
   * happened: a drain timeout (`abandoned`), an idle claim of a client that is gone (`client-lost`), or
   * one whose client is still connected (`reclaimed`). None of them is an environment timeout.
   */
  reclaimed(episodeId: string, kind: "reclaimed" | "abandoned"): void {
    const slot = this.#byEpisode.get(episodeId);
    if (!slot || slot.state !== "running") return;
    const clientId = slot.client?.id ?? null;
    const reason: AbortReason =
      kind === "abandoned"
        ? { kind: "abandoned", message: "abandoned by the server: a weight update's drain timed out" }
        : slot.client?.link
          ? { kind: "reclaimed", message: "reclaimed by the server: no chat call or heartbeat within server.idleTimeoutS" }
          : { kind: "client-lost", message: `client '${clientId}' disconnected; the server reclaimed its idle claim` };
    slot.client?.link?.send({ type: "cancel", episodeId, reason: reason.message });
    void this.#safeAbort(episodeId, reason);
    this.#release(slot);
    this.#d.counters.aborted += 1;
    this.#retryOrFail(slot, reason, episodeId, clientId);
    this.pump();
  }

  /** Stops a running or starting slot without a retry (its group failed): the client is told, the store aborts it. */
  cancel(slot: Slot, why: string): void {
    this.#judging.delete(slot);
    const link = slot.client?.link;
    if (link && slot.episodeId) link.send({ type: "cancel", episodeId: slot.episodeId, reason: why });
    if (slot.episodeId) void this.#safeAbort(slot.episodeId, { kind: "group-failed", message: why });
    this.#release(slot);
  }

  /** Aborts everything in flight (the scheduler is closing); their keys stop working. */
  async abortAll(message: string): Promise<void> {
    this.#closing.abort(new Error(message));
    const aborts: Array<Promise<void>> = [];
    for (const slot of this.#byEpisode.values()) {
      if (slot.episodeId) aborts.push(this.#safeAbort(slot.episodeId, { kind: "cancelled", message }));
    }
    this.#byEpisode.clear();
    await Promise.all(aborts);
  }

  async #assign(slot: Slot, client: ClientState): Promise<void> {
    const attempt = slot.attempt;
    const episodeId = `${slot.id}${this.#d.sessionTag}-t${slot.tries++}`;
    slot.state = "starting";
    slot.client = client;
    slot.episodeId = episodeId;
    client.slots.add(slot);
    this.#byEpisode.set(episodeId, slot);
    const env = slot.env;
    let claim: ClaimOutcome;
    try {
      // A synchronous registry (the in-process store) registers and claims in one turn, so a pause
      // cannot fall between the two.
      const registered = this.#d.registry.register({
        episodeId,
        env: env.config.name,
        envVersion: env.config.version,
        taskId: slot.task.id,
        groupId: slot.group?.id ?? slot.id,
        purpose: slot.purpose,
        agents: slot.seats.agents,
        samplingKey: `${slot.id}#${attempt}`,
      });
      if (registered instanceof Promise) await registered;
      const claimed = this.#d.registry.claim(episodeId, client.id);
      claim = claimed instanceof Promise ? await claimed : claimed;
    } catch (err) {
      if (slot.episodeId === episodeId && slot.state === "starting") {
        this.failAttempt(slot, { kind: "protocol", message: `registering the episode failed: ${String(err)}` });
      }
      return;
    }
    if (slot.episodeId !== episodeId || slot.state !== "starting" || !this.#d.running()) {
      if (slot.episodeId !== episodeId) await this.#safeAbort(episodeId, { kind: "client-lost", message: "lease lost while starting" });
      return;
    }
    if (claim.kind === "paused") {
      // Claims are paused for a weight sync: put it back in front, untouched, and wait for the resume.
      await this.#safeAbort(episodeId, { kind: "cancelled", message: "claims paused" });
      this.#release(slot);
      slot.state = "queued";
      env.queue.unshift(slot);
      this.#paused = true;
      return;
    }
    if (!client.link) {
      this.failAttempt(slot, { kind: "client-lost", message: "the client disconnected before the assignment" });
      return;
    }
    slot.state = "running";
    this.#d.counters.assigned += 1;
    const agents: Record<string, { baseUrl: string; apiKey: string; model: string; role: string }> = {};
    const baseUrl = this.#d.baseUrl().replace(/\/+$/, "");
    for (const { agentId, role, target } of slot.seats.agents) {
      agents[agentId] = { baseUrl, apiKey: claim.keys[agentId] ?? "", model: target.name, role };
    }
    client.link.send({
      type: "assign",
      episode: {
        episodeId,
        env: { name: env.config.name, version: env.config.version },
        task: slot.task,
        seed: slot.seed,
        agents,
        builtinAgents: slot.seats.builtin,
        maxTurns: env.config.maxTurns,
        purpose: slot.purpose,
        attempt,
      },
    });
  }

  #release(slot: Slot): void {
    if (slot.episodeId) this.#byEpisode.delete(slot.episodeId);
    slot.client?.slots.delete(slot);
    slot.client = null;
    slot.episodeId = null;
  }

  #retryOrFail(slot: Slot, reason: AbortReason, episodeId: string, clientId: string | null): void {
    slot.failures.push(reason);
    const willRetry = slot.failures.length <= this.#d.infraRetries && this.#d.running();
    this.#d.emit({ type: "episode-abort", episodeId, clientId, reason, willRetry });
    if (willRetry) {
      slot.attempt += 1;
      slot.state = "queued";
      this.#d.counters.retried += 1;
      slot.env.queue.unshift(slot);
      return;
    }
    slot.state = "failed";
    this.#d.settle(slot);
  }

  async #safeAbort(episodeId: string, reason: AbortReason): Promise<void> {
    try {
      await this.#d.registry.abort(episodeId, reason);
    } catch {
      // Already gone from the store (reclaimed, ended): nothing left to discard.
    }
  }
}

function seqOf(slot: Slot): number {
  return slot.evalRun ? -0.5 : (slot.group?.batch.index ?? 0);
}

/** Why a result's code may not count for `env` (its hash is one the run refuses), or null when it may. */
function refusedCode(env: SchedulerEnvironment, code: CodeVersion): string | null {
  const match = matchEnvironment(env, { name: env.name, version: env.version, hash: code.hash, dev: code.dev });
  return match.kind === "match" ? null : `the episode ran with code the run refuses: ${match.reason}`;
}
