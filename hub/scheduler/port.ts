import type { Task } from "../../sdk/env/index.ts";
import type { CodeVersion } from "../../sdk/swarm/protocol.ts";
import type { FailureKind } from "../../sdk/failure-kinds.ts";

/**
 * What the scheduler needs from the swarm server's episode store. The server's `EpisodeStore` satisfies
 * it (directly, or through `registryFromEpisodeStore`); tests may use any faithful implementation.
 */
export interface EpisodeRegistry {
  /** Registers one episode attempt (a fresh id for every try). */
  register(input: EpisodeRegistration): Promise<void> | void;
  /**
   * Claims it for a client and returns one signed key per registered agent. `paused` while claims are
   * paused for a weight sync (a registry without `claimsPaused`, or a race): the scheduler retries on
   * `claims-resumed`, or on its next lease tick.
   */
  claim(episodeId: string, clientId: string): Promise<ClaimOutcome> | ClaimOutcome;
  /** Keeps it from idle reclaim. */
  heartbeat(episodeId: string): void;
  /** Ends it with a reward per agent and the environment code it ran with; the server merges its calls into samples. */
  end(episodeId: string, rewards: Record<string, number>, info: Record<string, unknown>, code?: CodeVersion): Promise<void> | void;
  /** Aborts it: its keys stop working and its partial records are discarded. */
  abort(episodeId: string, reason: AbortReason): Promise<void> | void;
  /** True while claims are paused (a weight sync): the scheduler registers nothing until `claims-resumed`. */
  claimsPaused?(): boolean;
  /** Store events the scheduler reacts to; returns the unsubscribe function. */
  subscribe?(listener: (event: RegistryEvent) => void): () => void;
}

export type ClaimOutcome = { kind: "claimed"; keys: Record<string, string> } | { kind: "paused" };

export type AgentTarget = { kind: "policy"; name: string } | { kind: "frozen"; name: string };

export interface EpisodeRegistration {
  episodeId: string;
  env: string;
  envVersion: string;
  taskId: string;
  /** Episodes of one group share it (the GRPO group): `${batch}:${group}` for training. */
  groupId: string;
  purpose: "train" | "eval";
  /** Agents that talk to the server; builtin agents are not registered. */
  agents: Array<{ agentId: string; role: string; target: AgentTarget }>;
  /**
   * What this try plays (its slot and attempt, the same in a resumed run): deterministic mode seeds its
   * sampling from it, so a try played again after a crash samples what the first one did.
   */
  samplingKey: string;
}

/** Why an episode attempt ended without a reward (`sdk/failure-kinds.ts`): retried, never scored. */
export type AbortKind = FailureKind;

export interface AbortReason {
  kind: AbortKind;
  message: string;
}

export type RegistryEvent =
  | { type: "claims-resumed" }
  /** The store gave an episode up on its own (idle: `reclaimed`; a drain timed out: `abandoned`): re-queue it. */
  | { type: "reclaimed"; episodeId: string; kind: "reclaimed" | "abandoned" };

/** Tasks of an environment's split (the lead reads them with `EnvironmentRuntime.listTasks`). */
export type LoadTasks = (env: string, split: string) => Promise<Task[]>;
