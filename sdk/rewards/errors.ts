import { AgentJetError } from "../../errors/index.ts";

/** A reward model or judge could not score an episode: an infrastructure failure (retried, never reward 0). */
export class RewardModelError extends AgentJetError {
  declare readonly code: "AJ_ERR_REWARD_MODEL_UNAVAILABLE" | "AJ_ERR_REWARD_MODEL_FAILED" | "AJ_ERR_JUDGE_FAILED" | "AJ_ERR_JUDGE_VERDICT";
  constructor(code: RewardModelError["code"], message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
