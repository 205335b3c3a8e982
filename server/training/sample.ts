/** One training sequence, after timeline merging. */
export interface Sample {
  sampleId: string;
  episodeId: string;
  agentId: string;
  policy: string;
  taskId: string;
  /** Environment name, for per-environment metrics. */
  env: string;
  /** The GRPO group (see `groupKey`): advantages compare samples of one group only. */
  group: string;
  tokenIds: number[];
  /** 1 on tokens the policy generated (and their end-of-turn token), 0 elsewhere. Same length as tokenIds. */
  lossMask: number[];
  /** Behaviour log-prob of each token (0 where the mask is 0). Same length as tokenIds. */
  logprobs: number[];
  /** Weight version of each token's generating call (-1 where the mask is 0). */
  versions: number[];
  reward: number;
  /** Set by the advantage step. */
  advantage: number;
  /** Loss weight (1, or 1/N for an episode split into N samples when configured). */
  weight: number;
  /** How many calls this sample merges. */
  calls: number;
}

export interface TrainSample {
  tokenIds: number[];
  lossMask: number[];
  logprobs: number[];
  advantage: number;
  weight: number;
}

export interface TrainBatch {
  samples: TrainSample[];
  /**
   * Supervised (warm-start) step: each sample's behaviour log-probs are taken to be the current
   * model's, so the PPO ratio is 1 and the step follows advantage x the log-likelihood gradient
   * (advantage 1: plain maximum likelihood). `logprobs` are then ignored. The embedded engine implements it (the warm-start needs that engine).
   */
  supervised?: boolean;
  /**
   * Train on prefix tries (`merging.prefixTree`): samples sharing a prefix (retried calls, `n > 1`
   * branches of one prompt) compute it once, each token attending to its own root-to-leaf path. The loss,
   * gradients and step equal the flat samples' to float rounding; engines that cannot pack train flat.
   */
  prefixTree?: boolean;
}

export interface TrainMetrics {
  loss: number;
  /** Tokens under the loss mask. */
  tokens: number;
  gradNorm: number;
  clipFraction: number;
  kl?: number;
  /** A `prefixTree` step: the tokens it computed as prefix tries (every token, shared prefixes once). */
  treeTokens?: number;
  version: number;
  durationMs: number;
}
