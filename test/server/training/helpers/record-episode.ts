import { createEmbeddedTokenizer, EMBEDDED_IDS } from "../../../../server/tokenizers/embedded.ts";
import type { ChatTurnMessage, ToolDefinition } from "../../../../server/tokenizers/tokenizer.ts";
import type { CallRecord } from "../../../../server/tracker/call-record.ts";

/**
 * Records a scripted multi-turn conversation the way the tracker does: each call is rendered with the
 * embedded tokenizer, an assistant message that repeats an earlier generation is spliced with that
 * generation's exact ids, and the "model" output is the script's.
 */
export type StepKind = "append" | "retry" | "truncate" | "edit" | "strip" | "tools" | "overflow" | "duplicate";

export interface ScriptStep {
  kind: StepKind;
  /** Generated character ids (6..100); the end-of-turn id is added when `stop`. */
  out: number[];
  stop: boolean;
  logprobs: number[];
  /** The environment's reply after the call. */
  reply: string;
  bumpVersion: boolean;
  /** Which message an edit/strip/truncate touches. */
  pick: number;
}

const TOOLS_A: ToolDefinition[] = [{ name: "search", description: "find things" }];
const TOOLS_B: ToolDefinition[] = [{ name: "search", description: "find things" }, { name: "open", description: "open a page" }];

export interface RecordOptions {
  episodeId: string;
  agentId: string;
  policy?: string;
  task?: string;
  firstVersion?: number;
}

export function recordEpisode(steps: readonly ScriptStep[], opts: RecordOptions): CallRecord[] {
  const tok = createEmbeddedTokenizer();
  const generated = new Map<string, number[]>();
  let messages: ChatTurnMessage[] = [
    { role: "system", content: "You are a careful agent." },
    { role: "user", content: `Task: ${opts.task ?? "solve it"}` },
  ];
  let lastCallMessages: ChatTurnMessage[] | null = null;
  let tools: ToolDefinition[] | null = null;
  let version = opts.firstVersion ?? 0;
  let lastText: string | null = null;
  const calls: CallRecord[] = [];
  steps.forEach((step, seq) => {
    messages = applyEdit(step, messages, lastCallMessages);
    if (step.kind === "tools") tools = tools === TOOLS_A ? TOOLS_B : TOOLS_A;
    if (step.bumpVersion) version++;
    const rendered = tok.renderChat(messages, tools ? { tools, generated } : { generated });
    const overflow = step.kind === "overflow";
    const outputIds = overflow ? [] : [...step.out, ...(step.stop ? [EMBEDDED_IDS.imEnd] : [])];
    // "duplicate": the same text as the previous generation under other ids (a repeated tool call under
    // BPE); the splice map then holds the newer ids for both messages of that text.
    const outputText = overflow ? "" : step.kind === "duplicate" && lastText !== null ? lastText : tok.decode(step.out);
    calls.push({
      callId: `${opts.episodeId}/${opts.agentId}/${seq}`,
      episodeId: opts.episodeId,
      agentId: opts.agentId,
      policy: opts.policy ?? "main",
      seq,
      messages: structuredClone(messages),
      tools: tools ? [...tools] : null,
      segments: rendered.segments,
      headerIds: rendered.headerIds,
      outputIds,
      outputLogprobs: outputIds.map((_, i) => step.logprobs[i % step.logprobs.length] ?? -1),
      outputText,
      finishReason: overflow ? "overflow" : step.stop ? "stop" : "length",
      version,
      startedAt: seq,
      latencyMs: 1,
    });
    lastCallMessages = messages;
    if (overflow) {
      messages = [...messages, { role: "user", content: `overflow ${seq}` }];
      return;
    }
    generated.set(outputText, [...rendered.headerIds, ...outputIds]);
    lastText = outputText;
    messages = [...messages, { role: "assistant", content: outputText }, { role: "user", content: step.reply }];
  });
  return calls;
}

function applyEdit(step: ScriptStep, messages: ChatTurnMessage[], last: ChatTurnMessage[] | null): ChatTurnMessage[] {
  switch (step.kind) {
    case "retry":
      return last ?? messages;
    case "truncate": {
      if (messages.length <= 3) return messages;
      const keep = 1 + (step.pick % (messages.length - 2));
      return [messages[0]!, ...messages.slice(1).slice(-keep)];
    }
    case "edit":
    case "strip": {
      const role = step.kind === "edit" ? "user" : "assistant";
      const idx = messages.map((m, i) => (m.role === role ? i : -1)).filter((i) => i >= 0);
      if (idx.length === 0) return messages;
      const at = idx[step.pick % idx.length]!;
      return messages.map((m, i) => (i === at ? { ...m, content: step.kind === "edit" ? `${m.content} (edited)` : `${m.content.slice(0, 1)}~` } : m));
    }
    default:
      return messages;
  }
}

/** A plain append-only step (for hand-written cases). */
export function step(out: string, reply = "ok", over: Partial<ScriptStep> = {}): ScriptStep {
  const tok = createEmbeddedTokenizer();
  return { kind: "append", out: tok.encode(out), stop: true, logprobs: [-0.5, -0.25, -1], reply, bumpVersion: false, pick: 0, ...over };
}
