import { argumentsLeft, type Completion, type CompletionChoice, completionChunk, type CompletionHead, type CompletionSink, completionHead, systemFingerprint } from "./completion.ts";
import type { SseWriter } from "./sse-writer.ts";

/**
 * The chat completion as JSON text: the same text `JSON.stringify` makes of the `ChatCompletionResponse`
 * object (same keys in the same order; its numbers are integers, written as JSON writes them), written
 * straight from the completion: building that object and serializing it generically cost the proxy's
 * event loop more per call than the rest of its answer.
 */
export function toResponseJson(c: Completion): string {
  let choices = "";
  for (let i = 0; i < c.choices.length; i++) choices += i === 0 ? choiceJson(c.choices[i]!) : `,${choiceJson(c.choices[i]!)}`;
  const u = c.usage;
  return (
    `{"id":${JSON.stringify(c.id)},"object":"chat.completion","created":${c.created},"model":${JSON.stringify(c.model)},` +
    `"system_fingerprint":${JSON.stringify(systemFingerprint(c.version))},"choices":[${choices}],` +
    `"usage":{"prompt_tokens":${u.prompt_tokens},"completion_tokens":${u.completion_tokens},"total_tokens":${u.total_tokens}}}`
  );
}

/** One choice: `{ index, message: { role, content, refusal, reasoning_content?, tool_calls? }, logprobs, finish_reason }`. */
function choiceJson(ch: CompletionChoice): string {
  let message = `{"role":"assistant","content":${JSON.stringify(ch.content)},"refusal":null`;
  if (ch.reasoning !== null) message += `,"reasoning_content":${JSON.stringify(ch.reasoning)}`;
  if (ch.toolCalls.length > 0) message += `,"tool_calls":${JSON.stringify(ch.toolCalls)}`;
  const logprobs = ch.logprobs ? `{"content":${JSON.stringify(ch.logprobs)},"refusal":null}` : "null";
  return `{"index":${ch.index},"message":${message}},"logprobs":${logprobs},"finish_reason":${JSON.stringify(ch.finishReason)}}`;
}

/**
 * Streams a chat completion as `chat.completion.chunk` events while it is made: the role, content,
 * reasoning and tool-call deltas as they come, then per choice the rest of its tool calls and its finish
 * reason (with the log-probs of all its tokens), optional usage, and `[DONE]`.
 */
export function createChatStream(sse: SseWriter, n: number, includeUsage: boolean): CompletionSink & { finish(c: Completion): void } {
  let head: CompletionHead | null = null;
  const chunk = (index: number, delta: Record<string, unknown>, finishReason: string | null = null, logprobs: unknown = null) =>
    sse.send(completionChunk(head!, [{ index, delta, logprobs, finish_reason: finishReason }], includeUsage ? null : undefined));
  // each choice's streamed tool calls, by position: the id and the arguments sent
  const streamed = Array.from({ length: n }, () => [] as Array<{ id: string; sent: string }>);
  return {
    start(meta) {
      head = completionHead(meta, "chat.completion.chunk");
      for (let i = 0; i < n; i++) chunk(i, { role: "assistant", content: "" });
    },
    content(index, delta) {
      chunk(index, { content: delta });
    },
    reasoning(index, delta) {
      chunk(index, { reasoning_content: delta });
    },
    toolCallStart(index, position, id, name) {
      streamed[index]![position] = { id, sent: "" };
      chunk(index, { tool_calls: [{ index: position, id, type: "function", function: { name, arguments: "" } }] });
    },
    toolCallArguments(index, position, delta) {
      streamed[index]![position]!.sent += delta;
      chunk(index, { tool_calls: [{ index: position, function: { arguments: delta } }] });
    },
    finish(c) {
      for (const ch of c.choices) {
        const calls = streamed[ch.index]!;
        const rest: unknown[] = [];
        let next = calls.length;
        for (const t of ch.toolCalls) {
          const at = calls.findIndex((s) => s.id === t.id);
          if (at === -1) {
            rest.push({ index: next++, ...t });
            continue;
          }
          const left = argumentsLeft(t.function.arguments, calls[at]!.sent);
          if (left !== "") rest.push({ index: at, function: { arguments: left } });
        }
        if (rest.length > 0) chunk(ch.index, { tool_calls: rest });
        chunk(ch.index, {}, ch.finishReason, ch.logprobs ? { content: ch.logprobs, refusal: null } : null);
      }
      if (includeUsage) sse.send(completionChunk(head!, [], c.usage));
      sse.send("[DONE]");
      sse.end();
    },
  };
}
