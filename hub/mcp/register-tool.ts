import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { McpToolError } from "./errors.ts";

export const ToolErrorSchema = z.object({
  /** A stable `AJ_ERR_*` code. */
  code: z.string(),
  message: z.string(),
  details: z.unknown().optional(),
});
export type ToolError = z.infer<typeof ToolErrorSchema>;

/** What one tool is: its typed input and result, and what it does. */
export interface ToolSpec<I extends z.ZodObject, O extends z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  result: O;
  annotations?: ToolAnnotations;
  run(args: z.output<I>): Promise<z.input<O>>;
}

/**
 * Every tool answers `{ ok: true, result }` or, with `isError`, `{ ok: false, error }`. The envelope is the
 * declared output schema because the SDK's client (1.32) checks an error's structured content against
 * it too (modelcontextprotocol/typescript-sdk#1943): a bare error object would fail a result schema.
 */
export function envelopeOf<O extends z.ZodObject>(result: O) {
  return z.object({ ok: z.boolean(), result: result.optional(), error: ToolErrorSchema.optional() });
}

function answer(structured: Record<string, unknown>, isError: boolean): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured, ...(isError ? { isError: true } : {}) };
}

/** The structured error of anything a tool threw: its own `code` when it has an `AJ_ERR_*` one. */
export function toToolError(err: unknown): ToolError {
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : String(err);
  const details = err instanceof McpToolError && err.details !== undefined ? { details: err.details } : {};
  return { code: typeof code === "string" && code.startsWith("AJ_ERR_") ? code : "AJ_ERR_MCP_INTERNAL", message, ...details };
}

export function errorAnswer(error: ToolError): CallToolResult {
  return answer({ ok: false, error }, true);
}

export function registerTool<I extends z.ZodObject, O extends z.ZodObject>(server: McpServer, spec: ToolSpec<I, O>): void {
  const handler = async (args: unknown): Promise<CallToolResult> => {
    try {
      // Parsed, not passed on: the declared schema strips what it does not name, so the client's check
      // of the listed JSON Schema (no additional properties) never meets a field it was not told of.
      const result = spec.result.parse(await spec.run(args as z.output<I>));
      return answer({ ok: true, result }, false);
    } catch (err) {
      return errorAnswer(toToolError(err));
    }
  };
  server.registerTool(
    spec.name,
    {
      title: spec.title,
      description: spec.description,
      inputSchema: spec.input,
      outputSchema: envelopeOf(spec.result),
      ...(spec.annotations ? { annotations: spec.annotations } : {}),
    },
    handler as never,
  );
}

/**
 * The SDK answers arguments that fail a tool's input schema (and unknown tools) itself, with a text-only
 * error; this gives those the same structured `{ ok: false, error }` with a code. `createToolError` is
 * private to McpServer, so the test `test/hub/mcp/mcp-server.test.ts` pins that it still takes effect.
 */
export function codeProtocolErrors(server: McpServer): void {
  (server as unknown as { createToolError: (message: string) => CallToolResult }).createToolError = (message) => {
    const code = /Input validation error/.test(message) ? "AJ_ERR_MCP_INVALID_INPUT" : /Tool .* not found|disabled/.test(message) ? "AJ_ERR_MCP_UNKNOWN_TOOL" : "AJ_ERR_MCP_INTERNAL";
    return errorAnswer({ code, message });
  };
}
