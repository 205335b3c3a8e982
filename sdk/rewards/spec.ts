import { z } from "zod";

/**
 * The manifest's `rewardModels`: reward parts computed from the conversation by a model, next to (or
 * instead of) the reward the environment's own code returns. One home of that JSON. Paths are relative
 * to the plugin folder (the model ships inside the plugin, pinned with it).
 */

const PART_NAME = /^[a-z][a-z0-9-]{0,31}$/;

export const ConversationInputSchema = z
  .enum(["last-assistant", "transcript"])
  .default("last-assistant")
  .describe(
    "What the model reads: the agent's last reply, or its whole conversation as `role: content` lines (system, user, assistant, tool)",
  );

export const OnnxPartSchema = z.object({
  name: z.string().regex(PART_NAME, "lower-case letters, digits and '-'").describe("The part's name: its key in `combine` and its column in the report"),
  kind: z.literal("onnx"),
  model: z.string().min(1).describe("The .onnx file: input `[N, V]` float32 features, output `[N, 1]` (or `[N]`) float32 scores"),
  tokenizer: z
    .object({
      kind: z
        .enum(["bag-of-words", "characters"])
        .describe("bag-of-words: feature i counts word i (runs of letters, digits and ') of the lower-cased text; characters: feature i counts character i"),
      vocab: z.string().min(1).describe("A JSON array of words (or single characters), in the model's feature order"),
    })
    .describe("How the text becomes the model's input features"),
  input: ConversationInputSchema,
  output: z
    .enum(["sigmoid", "clip"])
    .default("sigmoid")
    .describe("How a score becomes a reward in the manifest's range: sigmoid(score) scaled to [min, max], or the score clipped to [min, max]"),
});

export const VerdictSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("number"),
    min: z.number().default(0),
    max: z.number().default(10),
  }).describe("The first number in the verdict's last line, on the scale [min, max]"),
  z.object({
    kind: z.literal("label"),
    labels: z.record(z.string(), z.number().min(0).max(1)).describe("Label -> share of the reward range (0 = min, 1 = max)"),
  }).describe("One of the labels, the last one named in the verdict"),
  z.object({
    kind: z.literal("json"),
    field: z.string().min(1).default("score"),
    min: z.number().default(0),
    max: z.number().default(10),
  }).describe("A JSON object (the last {...} in the verdict) whose `field` is a number on [min, max]"),
]);
export type Verdict = z.infer<typeof VerdictSchema>;

export const JudgePartSchema = z.object({
  name: z.string().regex(PART_NAME, "lower-case letters, digits and '-'").describe("The part's name: its key in `combine` and its column in the report"),
  kind: z.literal("judge"),
  model: z.string().min(1).describe("The judge model's name at its endpoint"),
  baseUrl: z
    .string()
    .url()
    .optional()
    .describe("An OpenAI-compatible base URL (…/v1); default `$AGENTJET_JUDGE_BASE_URL` on the client"),
  apiKeyEnv: z.string().default("AGENTJET_JUDGE_API_KEY").describe("The environment variable holding the judge's API key (none sent when unset)"),
  rubric: z
    .string()
    .min(1)
    .describe(
      "The judge's prompt: a file in the plugin (ending .md or .txt) or the text itself. `{{task}}`, `{{transcript}}`, `{{reference}}` are filled in; for `scope: group`, `{{trajectories}}` (numbered 1..n) and `{{n}}`",
    ),
  verdict: VerdictSchema.default({ kind: "number", min: 0, max: 10 }),
  scope: z
    .enum(["episode", "group"])
    .default("episode")
    .describe(
      "episode: one verdict per episode, on the client. group: the judge sees all n trajectories of a GRPO group at once and ranks them (a JSON array of trajectory numbers, best first); rank r of n earns min + (max - min) * (n - r) / (n - 1)",
    ),
  input: ConversationInputSchema,
  retries: z
    .number()
    .int()
    .min(0)
    .max(10)
    .default(2)
    .describe(
      "Further tries after a malformed verdict (at once), or after a connection error, a timeout, HTTP 408, 429 or 5xx (after a backoff wait: 0.5-1 s, doubling up to 4-8 s, longer when the judge sends Retry-After, up to 60 s). Other HTTP errors (400, 401, 403, 404) fail at once",
    ),
  timeoutMs: z.number().int().positive().default(30_000).describe("The limit of one try, in milliseconds"),
  temperature: z.number().min(0).max(2).default(0),
});

export const RewardPartSchema = z.discriminatedUnion("kind", [OnnxPartSchema, JudgePartSchema]);
export type RewardPart = z.infer<typeof RewardPartSchema>;
export type OnnxPart = z.infer<typeof OnnxPartSchema>;
export type JudgePart = z.infer<typeof JudgePartSchema>;

export const CombineSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("sum"),
    weights: z
      .record(z.string(), z.number())
      .default({})
      .describe("Part name (or `env`, the environment's own reward) -> weight; parts not named weigh 1, `env` weighs 0 unless named"),
  }),
  z.object({
    kind: z.literal("gate"),
    gate: z.string().default("env").describe("The part that gates: below `threshold`, the reward is the range's minimum"),
    threshold: z.number(),
    then: z.string().describe("The part whose value is the reward when the gate is open"),
  }),
]);
export type Combine = z.infer<typeof CombineSchema>;

export const RewardModelsSchema = z
  .object({
    parts: z
      .array(RewardPartSchema)
      .min(1)
      .describe("The reward parts, each named: `kind: onnx` (a reward model run on the client) or `kind: judge` (an LLM judge at an OpenAI-compatible endpoint)"),
    combine: CombineSchema.default({ kind: "sum", weights: {} }).describe(
      "How the parts and the environment's own reward (`env`) make the episode's reward: `sum` (weighted) or `gate` (one part opens the gate, another is the reward)",
    ),
  })
  .superRefine((spec, ctx) => {
    const names = new Set<string>(["env"]);
    for (const [i, p] of spec.parts.entries()) {
      if (names.has(p.name)) ctx.addIssue({ code: "custom", path: ["parts", i, "name"], message: `part name '${p.name}' is used twice (or is 'env')` });
      names.add(p.name);
    }
    const named = spec.combine.kind === "sum" ? Object.keys(spec.combine.weights) : [spec.combine.gate, spec.combine.then];
    for (const n of named) if (!names.has(n)) ctx.addIssue({ code: "custom", path: ["combine"], message: `names part '${n}', which is not among ${[...names].join(", ")}` });
    const groups = spec.parts.filter((p) => p.kind === "judge" && p.scope === "group");
    if (groups.length > 0 && spec.parts.length > 1) {
      ctx.addIssue({ code: "custom", path: ["parts"], message: "a group judge (scope: group) must be the only part: its ranks are the reward" });
    }
  })
  .describe("Rewards computed by models from the conversation (ONNX reward models, LLM judges), combined with the environment's own");
export type RewardModels = z.infer<typeof RewardModelsSchema>;

/** The reward parts recorded with an episode (`metadata.rewardParts`): per agent, part name -> value, plus the judges' raw verdicts. */
export interface RewardParts {
  [agentId: string]: { values: Record<string, number>; verdicts?: Record<string, string> };
}
