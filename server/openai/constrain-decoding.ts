import type { PolicyRuntime } from "../app/server-context.ts";
import type { GuidedDecoding, TokenMask } from "../engines/engine.ts";
import { HttpError } from "./errors.ts";
import { callableTools, type GenerationRequest } from "./generation-request.ts";
import { createJsonMask, createToolCallMask, toJsonGrammar } from "./json-mask.ts";

export interface DecodingConstraint {
  /** A fresh mask per choice (masks are stateful), for engines that apply masks. */
  mask?: () => TokenMask;
  guided?: GuidedDecoding;
  /** The fewest output tokens that can hold a complete constrained answer. */
  minTokens: number;
}

function refuse(param: string, message: string): never {
  throw new HttpError(400, "AJ_ERR_UNSUPPORTED_PARAMETER", `${param}: ${message}`, { param });
}

/**
 * The constraint a request puts on decoding (`response_format` json, `tool_choice` required or named),
 * in the form the policy's engine takes; null when there is none. What the engine cannot honour is a 400
 * naming the field, never a silent ignore.
 */
export function constrainDecoding(request: GenerationRequest, policy: PolicyRuntime): DecodingConstraint | null {
  const { engine, tokenizer } = policy;
  const forcesTool = request.toolChoice === "required" || typeof request.toolChoice === "object";
  const format = request.responseFormat;
  if (forcesTool && format.type !== "text") {
    refuse(request.params.responseFormat, "a JSON response format and a required tool call cannot both hold");
  }
  if (forcesTool) {
    if (engine.structuredOutput !== "mask") {
      refuse(request.params.toolChoice, `policy '${policy.name}' (engine ${engine.kind}) cannot force a tool call`);
    }
    const tools = callableTools(request).map((t) => ({ name: t.name, grammar: toJsonGrammar(t.parameters ?? { type: "object" }, request.params.toolChoice) }));
    const mask = () => createToolCallMask(tokenizer, tools);
    return { mask, minTokens: mask().minTokens };
  }
  if (format.type === "text") return null;
  const schema = format.type === "json_schema" ? format.schema : { type: "object" };
  if (engine.structuredOutput === "guided") {
    return { guided: format.type === "json_schema" ? { kind: "json_schema", schema } : { kind: "json_object" }, minTokens: 1 };
  }
  if (engine.structuredOutput !== "mask") {
    refuse(request.params.responseFormat, `policy '${policy.name}' (engine ${engine.kind}) cannot constrain decoding`);
  }
  const grammar = toJsonGrammar(schema, request.params.responseFormat);
  const mask = () => createJsonMask(tokenizer, grammar);
  return { mask, minTokens: mask().minTokens };
}
