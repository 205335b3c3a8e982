/** Model-based rewards for other folders: the group judge (`hub/run/group-judges.ts`) and the ONNX scorer (the benchmarks). */
export { conversationText, type ConversationMessage } from "./conversation-text.ts";
export { readRubric } from "./episode-rewarder.ts";
export { Judge } from "./judge.ts";
export { OnnxScorer, onnxAvailable } from "./onnx-pool.ts";
export { judgesWithoutEndpoint } from "./judge-endpoints.ts";
export type { JudgePart, RewardParts } from "./spec.ts";
export { taskSlots } from "./task-slots.ts";
export { rankRewards } from "./verdict.ts";
