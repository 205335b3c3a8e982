/** Model-based rewards: the manifest's `rewardModels` parts (ONNX reward models, LLM judges) and their combination. */
export { combineParts } from "./combine.ts";
export { conversationText, type ConversationMessage } from "./conversation-text.ts";
export { EpisodeRewarder, readRubric, toRange, type Range } from "./episode-rewarder.ts";
export { RewardModelError } from "./errors.ts";
export { fillRubric, Judge, type JudgeDeps, type JudgeVerdict } from "./judge.ts";
export { OnnxScorer, onnxAvailable, type FeatureKind, type OnnxScorerOptions } from "./onnx-pool.ts";
export {
  CombineSchema,
  JudgePartSchema,
  OnnxPartSchema,
  RewardModelsSchema,
  RewardPartSchema,
  VerdictSchema,
  type Combine,
  type JudgePart,
  type OnnxPart,
  type RewardModels,
  type RewardPart,
  type RewardParts,
  type Verdict,
} from "./spec.ts";
export { taskSlots } from "./task-slots.ts";
export { parseRanking, parseVerdict, rankRewards } from "./verdict.ts";
