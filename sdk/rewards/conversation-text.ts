/** One message of a recorded conversation, as chat-completions JSON carries it. */
export interface ConversationMessage {
  role: string;
  content?: unknown;
  tool_calls?: ReadonlyArray<{ function?: { name?: string; arguments?: string } }>;
}

/** The text a reward model or judge reads from an agent's conversation (`input` of a reward part). */
export function conversationText(messages: readonly ConversationMessage[], input: "last-assistant" | "transcript"): string {
  if (input === "last-assistant") {
    for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === "assistant") return messageText(messages[i]!);
    return "";
  }
  return messages.map((m) => `${m.role}: ${messageText(m)}`).join("\n");
}

function messageText(m: ConversationMessage): string {
  const content = typeof m.content === "string" ? m.content : Array.isArray(m.content) ? m.content.map(partText).join("") : "";
  const calls = (m.tool_calls ?? []).map((c) => `${c.function?.name ?? ""}(${c.function?.arguments ?? ""})`);
  return [content, ...calls].filter((s) => s.length > 0).join("\n");
}

function partText(part: unknown): string {
  if (typeof part === "string") return part;
  if (part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string") return (part as { text: string }).text;
  return "";
}
