import { z } from "zod";

/** The one home of OpenAI wire JSON (chat completions, models, errors). Unknown fields are ignored. */

const TextPart = z.object({ type: z.literal("text"), text: z.string() });
export const ContentSchema = z.union([z.string(), z.array(TextPart)]);

const ToolCallSchema = z.object({
  id: z.string(),
  type: z.literal("function").default("function"),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
});

export const ChatMessageSchema = z.discriminatedUnion("role", [
  z.object({ role: z.literal("system"), content: ContentSchema, name: z.string().optional() }),
  z.object({ role: z.literal("developer"), content: ContentSchema, name: z.string().optional() }),
  z.object({ role: z.literal("user"), content: ContentSchema, name: z.string().optional() }),
  z.object({
    role: z.literal("assistant"),
    content: ContentSchema.nullish(),
    tool_calls: z.array(ToolCallSchema).nullish(),
    name: z.string().optional(),
    refusal: z.string().nullish(),
  }),
  z.object({ role: z.literal("tool"), content: ContentSchema, tool_call_id: z.string().min(1) }),
]);
export type ChatMessage = z.infer<typeof ChatMessageSchema>;

export const ToolSchema = z.object({
  type: z.literal("function"),
  function: z.object({
    name: z.string().min(1).max(64),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  }),
});

export const ToolChoiceSchema = z.union([
  z.enum(["none", "auto", "required"]),
  z.object({ type: z.literal("function"), function: z.object({ name: z.string().min(1) }) }),
]);

export const ChatCompletionRequestSchema = z.object({
  model: z.string().min(1),
  messages: z.array(ChatMessageSchema).min(1),
  tools: z.array(ToolSchema).nullish(),
  tool_choice: ToolChoiceSchema.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  max_tokens: z.number().int().positive().nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).nullish(),
  seed: z.number().int().nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
  n: z.literal(1).nullish(),
  user: z.string().nullish(),
});
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequestSchema>;

export interface ResponseToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface TokenLogprob {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: Array<{ token: string; logprob: number; bytes: number[] }>;
}

export interface ChatCompletionResponse {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  system_fingerprint: string;
  choices: Array<{
    index: 0;
    message: { role: "assistant"; content: string | null; refusal: null; tool_calls?: ResponseToolCall[] };
    logprobs: { content: TokenLogprob[]; refusal: null } | null;
    finish_reason: "stop" | "length" | "tool_calls";
  }>;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

export interface ModelList {
  object: "list";
  data: Array<{ id: string; object: "model"; created: number; owned_by: string }>;
}

export interface OpenAIErrorBody {
  error: { message: string; type: string; code: string | null; param: string | null };
}
