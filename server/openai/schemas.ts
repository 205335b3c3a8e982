import { z } from "zod";

/**
 * The one home of OpenAI wire JSON (chat completions, Responses, legacy completions, models, errors).
 * Unknown fields are ignored.
 */

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

const JsonSchemaObject = z.record(z.string(), z.unknown());

export const ResponseFormatSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }),
  z.object({ type: z.literal("json_object") }),
  z.object({
    type: z.literal("json_schema"),
    json_schema: z.object({
      name: z.string().min(1).max(64),
      description: z.string().optional(),
      schema: JsonSchemaObject.optional(),
      strict: z.boolean().nullish(),
    }),
  }),
]);

/** OpenAI's `frequency_penalty` / `presence_penalty` range. */
const PenaltySchema = z.number().min(-2).max(2);
/** Token id -> bias, as OpenAI takes it. */
const LogitBiasSchema = z.record(z.string(), z.number().min(-100).max(100));

/** Extra chat-template variables (vLLM's `chat_template_kwargs`), e.g. `{ enable_thinking: false }`. */
const TemplateKwargsSchema = z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]));

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
  n: z.number().int().min(1).max(16).nullish(),
  response_format: ResponseFormatSchema.nullish(),
  chat_template_kwargs: TemplateKwargsSchema.nullish(),
  frequency_penalty: PenaltySchema.nullish(),
  presence_penalty: PenaltySchema.nullish(),
  logit_bias: LogitBiasSchema.nullish(),
  user: z.string().nullish(),
});
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequestSchema>;

/** Legacy `POST /v1/completions`: a prompt string, completed as text (no chat template). */
export const CompletionRequestSchema = z.object({
  model: z.string().min(1),
  prompt: z
    .union([z.string(), z.array(z.string())], { error: "a string, or an array of one string" })
    .refine((p) => typeof p === "string" || p.length === 1, "one prompt per request (an array of exactly one string)")
    // the engine continues the prompt's tokens: an empty one gives it none (a 500 from the engine before)
    .refine((p) => (typeof p === "string" ? p : p[0]) !== "", "the prompt is empty: give the text the model continues"),
  max_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).nullish(),
  seed: z.number().int().nullish(),
  logprobs: z.number().int().min(0).max(5).nullish(),
  n: z.number().int().min(1).max(16).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  echo: z.literal(false).nullish(),
  suffix: z.null().optional(),
  frequency_penalty: PenaltySchema.nullish(),
  presence_penalty: PenaltySchema.nullish(),
  logit_bias: LogitBiasSchema.nullish(),
  user: z.string().nullish(),
});
export type CompletionRequest = z.infer<typeof CompletionRequestSchema>;

// --- Responses API -------------------------------------------------------------------------------

const InputTextPart = z.object({ type: z.enum(["input_text", "output_text"]), text: z.string() });
const RefusalPart = z.object({ type: z.literal("refusal"), refusal: z.string() });
const MessageContent = z.union([z.string(), z.array(z.union([InputTextPart, RefusalPart]))]);

/** An input item; a bare `{ role, content }` is a message. */
export const ResponseInputItemSchema = z.preprocess(
  (v) => (typeof v === "object" && v !== null && !Array.isArray(v) && !("type" in v) ? { ...v, type: "message" } : v),
  z.discriminatedUnion("type", [
    z.object({
      type: z.literal("message"),
      role: z.enum(["user", "system", "developer", "assistant"]),
      content: MessageContent,
      id: z.string().nullish(),
    }),
    z.object({
      type: z.literal("function_call"),
      call_id: z.string().min(1),
      name: z.string().min(1),
      arguments: z.string(),
      id: z.string().nullish(),
    }),
    z.object({
      type: z.literal("function_call_output"),
      call_id: z.string().min(1),
      output: z.union([z.string(), z.array(InputTextPart)]),
      id: z.string().nullish(),
    }),
    z.object({ type: z.literal("reasoning"), id: z.string().nullish(), summary: z.array(z.unknown()).optional() }),
    z.object({ type: z.literal("item_reference"), id: z.string().min(1) }),
  ]),
);
export type ResponseInputItem = z.infer<typeof ResponseInputItemSchema>;

export const ResponseToolSchema = z.object({
  type: z.literal("function"),
  name: z.string().min(1).max(64),
  description: z.string().nullish(),
  parameters: JsonSchemaObject.nullish(),
  strict: z.boolean().nullish(),
});

export const ResponseTextFormatSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }),
  z.object({ type: z.literal("json_object") }),
  z.object({
    type: z.literal("json_schema"),
    name: z.string().min(1).max(64),
    schema: JsonSchemaObject,
    description: z.string().nullish(),
    strict: z.boolean().nullish(),
  }),
]);

export const ResponsesRequestSchema = z.object({
  model: z.string().min(1).nullish(),
  input: z.union([z.string(), z.array(ResponseInputItemSchema)]),
  instructions: z.string().nullish(),
  tools: z.array(ResponseToolSchema).nullish(),
  tool_choice: z
    .union([z.enum(["none", "auto", "required"]), z.object({ type: z.literal("function"), name: z.string().min(1) })])
    .nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  stream: z.boolean().nullish(),
  max_output_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
  include: z.array(z.string()).nullish(),
  text: z.object({ format: ResponseTextFormatSchema.nullish() }).nullish(),
  previous_response_id: z.string().nullish(),
  store: z.boolean().nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  chat_template_kwargs: TemplateKwargsSchema.nullish(),
  user: z.string().nullish(),
});
export type ResponsesRequest = z.infer<typeof ResponsesRequestSchema>;

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
    index: number;
    message: { role: "assistant"; content: string | null; refusal: null; reasoning_content?: string; tool_calls?: ResponseToolCall[] };
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
  /** `state`: the current state of what refused the request, when it has one (an episode's, on `AJ_ERR_EPISODE_STATE`). */
  error: { message: string; type: string; code: string | null; param: string | null; state?: string };
}
