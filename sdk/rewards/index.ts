/** Model-based rewards for other folders: the group judge (`hub/run/group-judges.ts`) and the ONNX scorer (the benchmarks). */
export { conversationText, type ConversationMessage } from "./conversation-text.ts";
export { readRubric } from "./episode-rewarder.ts";
export { Judge } from "./judge.ts";
export { OnnxScorer, onnxAvailable } from "./onnx-pool.ts";
export { judgesWithoutEndpoint, type JudgePart, type RewardParts } from "./spec.ts";
export { taskSlots } from "./task-slots.ts";
export { rankRewards } from "./verdict.ts";
