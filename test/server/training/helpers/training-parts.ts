import { EmbeddedModelSchema, OptimizerSchema } from "../../../../server/config/run-config.ts";
import { createEmbeddedEngine, type EmbeddedEngine } from "../../../../server/engines/embedded/index.ts";
import { createEmbeddedTokenizer } from "../../../../server/tokenizers/embedded.ts";
import type { TrainingConfig } from "../../../../server/training/coordinator.ts";
import type { EndedEpisode, EpisodeStorePort, TrainerPort } from "../../../../server/training/ports.ts";
import type { TrainBatch } from "../../../../server/training/sample.ts";
import { recordEpisode, step } from "./record-episode.ts";

/** A tiny real embedded engine (fast enough for unit tests). */
export function createTinyEngine(overrides: { context?: number; seed?: number } = {}): EmbeddedEngine {
  return createEmbeddedEngine({
    vocabSize: createEmbeddedTokenizer().vocabSize,
    model: EmbeddedModelSchema.parse({ layers: 1, dim: 16, heads: 2, context: overrides.context ?? 512, seed: overrides.seed ?? 1 }),
    optimizer: OptimizerSchema.parse({}),
  });
}

/** Wraps a trainer to keep every batch it was given (the real trainer still trains). */
export function recordBatches(trainer: TrainerPort): { trainer: TrainerPort; batches: TrainBatch[] } {
  const batches: TrainBatch[] = [];
  return {
    batches,
    trainer: {
      version: () => trainer.version(),
      train: (batch) => {
        batches.push(structuredClone(batch));
        return trainer.train(batch);
      },
    },
  };
}

/**
 * A minimal in-memory implementation of the coordinator's episode-store port: episodes are "claimed"
 * with `claim`, and `end` emits them the way the server's store does.
 */
export class InMemoryEpisodeStore implements EpisodeStorePort {
  paused = false;
  readonly pauses: string[] = [];
  readonly abandoned: string[] = [];
  readonly #inFlight = new Set<string>();
  readonly #listeners = new Set<(e: EndedEpisode) => void>();

  pauseClaims(): void {
    this.paused = true;
    this.pauses.push("pause");
  }
  resumeClaims(): void {
    this.paused = false;
    this.pauses.push("resume");
  }
  inFlight(): readonly string[] {
    return [...this.#inFlight];
  }
  abandon(episodeIds: readonly string[]): void {
    for (const id of episodeIds) {
      this.#inFlight.delete(id);
      this.abandoned.push(id);
    }
  }
  onEnded(listener: (e: EndedEpisode) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  /** Returns false while claims are paused, as the real store does. */
  claim(episodeId: string): boolean {
    if (this.paused) return false;
    this.#inFlight.add(episodeId);
    return true;
  }
  end(e: EndedEpisode): void {
    this.#inFlight.delete(e.episodeId);
    for (const l of this.#listeners) l(e);
  }
}

/** A clock the test moves: `sleep` advances it and yields one turn of the event loop, so the coordinator's waits take no real time. */
export function manualClock(start: number): { now: () => number; sleep: (ms: number) => Promise<void>; advance: (ms: number) => number } {
  let t = start;
  return {
    now: () => t,
    sleep: async (ms) => {
      t += ms;
      await new Promise((r) => setImmediate(r));
    },
    advance: (ms) => (t += ms),
  };
}

export function trainingConfig(over: Partial<TrainingConfig["batching"]> = {}, extra: Partial<TrainingConfig> = {}): TrainingConfig {
  return {
    batching: {
      strategy: "tasks", batchTasks: 2, groupSize: 2, maxCachedEpisodes: 100, filterEqualRewards: true, clientIdleS: 600, ...over,
    },
    merging: { match: "text", ignoreTools: true, overflow: "drop", prefixTree: false },
    advantage: { eps: 1e-6, baseline: "episode", lossWeight: "none" },
    syncTimeoutS: 60,
    ...extra,
  };
}

/** A rewarded two-call episode of one agent `a` on policy `main`. */
export function rewardedEpisode(
  episodeId: string,
  taskId: string,
  reward: number,
  opts: { clientId?: string; version?: number; outcome?: EndedEpisode["outcome"]; evaluation?: boolean; env?: string; groupId?: string } = {},
): EndedEpisode {
  return {
    episodeId,
    taskId,
    env: opts.env ?? "smoke",
    groupId: opts.groupId ?? null,
    clientId: opts.clientId ?? "c1",
    evaluation: opts.evaluation ?? false,
    outcome: opts.outcome ?? { kind: "rewarded", rewards: { a: reward } },
    calls: recordEpisode([step(`${taskId}?`), step("ok.")], { episodeId, agentId: "a", task: taskId, firstVersion: opts.version ?? 0 }),
  };
}
