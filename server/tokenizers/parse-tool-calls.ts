const TOOL_CALL = /<tool_call>([\s\S]*?)<\/tool_call>/g;

/**
 * Splits a generation into content and `<tool_call>{"name":..,"arguments":..}</tool_call>` blocks (the
 * Qwen/Hermes syntax both tokenizers use). A block that is not valid JSON with a string `name` stays text.
 */
export function parseToolCalls(text: string): { content: string; toolCalls: Array<{ name: string; arguments: string }> } {
  const toolCalls: Array<{ name: string; arguments: string }> = [];
  const content = text.replace(TOOL_CALL, (block, inner: string) => {
    try {
      const parsed = JSON.parse(inner.trim()) as unknown;
      if (typeof parsed !== "object" || parsed === null) return block;
      const { name, arguments: args } = parsed as { name?: unknown; arguments?: unknown };
      if (typeof name !== "string" || name.length === 0) return block;
      toolCalls.push({ name, arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}) });
      return "";
    } catch {
      return block;
    }
  });
  return { content: toolCalls.length > 0 ? content.trim() : content, toolCalls };
}
