import type { ChatTurnMessage, ToolDefinition } from "../tokenizers/tokenizer.ts";
import { HttpError } from "./errors.ts";

export type ToolChoice = "none" | "auto" | "required" | { name: string };

export type ResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | {
      type: "json_schema";
      name: string;
      schema: Record<string, unknown>;
      /** As the request gave them: forwarded to a frozen model's upstream (the embedded engine's mask is always strict). */
      description?: string;
      strict?: boolean;
    };

/**
 * One generation request in the server's own terms, whichever API it came through (chat completions,
 * Responses, legacy completions): the same request renders and records the same tokens.
 */
export interface GenerationRequest {
  /** Legacy completions: this text is the whole prompt, tokenized as it stands (no chat template). */
  prompt?: string;
  messages: ChatTurnMessage[];
  tools: ToolDefinition[];
  toolChoice: ToolChoice;
  parallelToolCalls: boolean;
  /** Requested output tokens; the room left in the context clips it. Undefined: the run config's default. */
  maxTokens: number | undefined;
  temperature: number | undefined;
  topP: number | undefined;
  stop: string[];
  seed: number | undefined;
  logprobs: boolean;
  topLogprobs: number;
  n: number;
  responseFormat: ResponseFormat;
  /** OpenAI's `frequency_penalty` and `presence_penalty` (0 when absent), and whether a non-empty `logit_bias` came: see sampling-reshapes.ts. */
  penalties?: { frequency: number; presence: number };
  logitBias?: boolean;
  /** Extra variables for the chat template (`enable_thinking`). */
  templateKwargs: Record<string, unknown>;
  /** Field names as the client's API spells them, for 400s. */
  params: { toolChoice: string; responseFormat: string };
}

/** A named tool choice must name a declared tool; `required` needs tools. */
export function checkToolChoice(req: GenerationRequest): void {
  const choice = req.toolChoice;
  const param = req.params.toolChoice;
  if (typeof choice === "object" && !req.tools.some((t) => t.name === choice.name)) {
    throw new HttpError(400, "AJ_ERR_INVALID_REQUEST", `${param}: no tool named '${choice.name}' is declared in tools`, { param });
  }
  if (choice === "required" && req.tools.length === 0) {
    throw new HttpError(400, "AJ_ERR_INVALID_REQUEST", `${param}: 'required' needs at least one tool in tools`, { param });
  }
}

/** The tools a generation may call: none, all, or the named one. */
export function callableTools(req: GenerationRequest): ToolDefinition[] {
  const choice = req.toolChoice;
  if (choice === "none") return [];
  if (typeof choice === "object") return req.tools.filter((t) => t.name === choice.name);
  return req.tools;
}
