import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import type { Task } from "../env/protocol.ts";
import { combineParts } from "./combine.ts";
import { type ConversationMessage, conversationText } from "./conversation-text.ts";
import { Judge, type JudgeDeps } from "./judge.ts";
import type { OnnxScorer } from "./onnx-pool.ts";
import type { JudgePart, RewardModels, RewardParts } from "./spec.ts";
import { taskSlots } from "./task-slots.ts";

export interface Range {
  min: number;
  max: number;
}

/** A rubric is a file in the plugin when it names one (.md / .txt); otherwise its own text. */
export function readRubric(part: JudgePart, pluginDir: string): string {
  if (/\.(md|txt)$/.test(part.rubric) && !part.rubric.includes("\n")) {
    return readFileSync(isAbsolute(part.rubric) ? part.rubric : join(pluginDir, part.rubric), "utf8");
  }
  return part.rubric;
}

/**
 * The client side of model-based rewards for one environment: scores an ended episode's agents with
 * the manifest's episode-scope parts (ONNX models in the shared scoring processes, episode judges) and
 * combines them with the environment's reward. Throws `RewardModelError` when a part cannot score:
 * the episode is then aborted as `reward-model` and retried.
 */
export class EpisodeRewarder {
  readonly #judges = new Map<string, Judge>();

  constructor(
    readonly spec: RewardModels,
    readonly pluginDir: string,
    readonly range: Range,
    readonly scorer: OnnxScorer,
    deps: JudgeDeps = {},
  ) {
    for (const part of spec.parts) {
      if (part.kind === "judge" && part.scope === "episode") this.#judges.set(part.name, new Judge(part, readRubric(part, pluginDir), deps));
    }
  }

  /** True when parts run on the client (a group judge runs where the group is assembled). */
  get scoresEpisodes(): boolean {
    return this.spec.parts.some((p) => p.kind === "onnx" || p.scope === "episode");
  }

  async score(input: {
    task: Task;
    envRewards: Readonly<Record<string, number>>;
    conversations: Readonly<Record<string, readonly ConversationMessage[]>>;
    /** Cuts the judges' tries and waits short (the episode was cancelled). */
    signal?: AbortSignal;
  }): Promise<{ rewards: Record<string, number>; parts: RewardParts }> {
    const rewards: Record<string, number> = {};
    const parts: RewardParts = {};
    const slots = taskSlots(input.task);
    await Promise.all(
      Object.entries(input.envRewards).map(async ([agentId, envReward]) => {
        const messages = input.conversations[agentId] ?? [];
        const values: Record<string, number> = { env: envReward };
        const verdicts: Record<string, string> = {};
        await Promise.all(
          this.spec.parts.map(async (part) => {
            const text = conversationText(messages, part.input);
            if (part.kind === "onnx") {
              const raw = await this.scorer.score(this.#path(part.model), { path: this.#path(part.tokenizer.vocab), kind: part.tokenizer.kind }, text);
              values[part.name] = toRange(raw, part.output, this.range);
            } else if (part.scope === "episode") {
              const v = await this.#judges.get(part.name)!.scoreEpisode({ ...slots, transcript: text }, input.signal ? { signal: input.signal } : {});
              values[part.name] = this.range.min + (this.range.max - this.range.min) * v.share!;
              verdicts[part.name] = v.raw;
            }
          }),
        );
        rewards[agentId] = combineParts(values, this.spec.combine, this.range);
        parts[agentId] = Object.keys(verdicts).length ? { values, verdicts } : { values };
      }),
    );
    return { rewards, parts };
  }

  #path(p: string): string {
    return isAbsolute(p) ? p : join(this.pluginDir, p);
  }
}

/** An ONNX score as a reward: sigmoid scaled to the range, or clipped to it. */
export function toRange(score: number, output: "sigmoid" | "clip", range: Range): number {
  if (output === "clip") return Math.min(range.max, Math.max(range.min, score));
  return range.min + (range.max - range.min) / (1 + Math.exp(-score));
}
