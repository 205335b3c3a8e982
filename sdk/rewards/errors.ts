/** A reward model or judge could not score an episode: an infrastructure failure (retried, never reward 0). */
export class RewardModelError extends Error {
  override readonly name = "RewardModelError";
  constructor(
    readonly code: "AJ_ERR_REWARD_MODEL_UNAVAILABLE" | "AJ_ERR_REWARD_MODEL_FAILED" | "AJ_ERR_JUDGE_FAILED" | "AJ_ERR_JUDGE_VERDICT",
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
