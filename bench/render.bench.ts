import { randomUUID } from "node:crypto";
import { cpus, loadavg } from "node:os";
import { createQwen3Tokenizer } from "../server/tokenizers/qwen3.ts";
import type { ChatTurnMessage } from "../server/tokenizers/tokenizer.ts";
import { type Bench, fmt, median } from "./harness.ts";

/**
 * The qwen3 render as an episode meets it: call k's prompt is calls 1..k-1's messages plus new ones, so
 * with per-message segments cached an episode should cost about one tokenization of its final context.
 * Also the time one large request holds the event loop (the render is synchronous).
 */

const TOOL_OUTPUT = "Directory listing:\n" + Array.from({ length: 12 }, (_, i) => `  file_${i}.py  ${1000 + i * 37} bytes  modified 2026-01-0${(i % 9) + 1}`).join("\n");

/** A 30-call agent episode: system, task, then per call an assistant tool call and its tool result. */
function episode(calls: number, salt: string): ChatTurnMessage[][] {
  const base: ChatTurnMessage[] = [
    { role: "system", content: `You are a coding agent. Session ${salt}.` },
    { role: "user", content: "Find the failing test in the repository, fix it, and report what you changed." },
  ];
  const prompts: ChatTurnMessage[][] = [];
  const messages = [...base];
  for (let k = 0; k < calls; k++) {
    prompts.push([...messages]);
    messages.push(
      { role: "assistant", content: `Step ${k}: I will look at the next directory.`, toolCalls: [{ id: `c${k}`, name: "ls", arguments: `{"path": "src/module_${k}"}` }] },
      { role: "tool", content: `${TOOL_OUTPUT}\n(step ${k}, ${salt})`, toolCallId: `c${k}` },
    );
  }
  return prompts;
}

function longConversation(n: number, salt: string): ChatTurnMessage[] {
  return Array.from({ length: n }, (_, i): ChatTurnMessage => (i % 2 === 0 ? { role: "user", content: `Question ${i} (${salt}): what is ${i} + ${i}?` } : { role: "assistant", content: `It is ${2 * i}.` }));
}

export const bench: Bench = {
  name: "render",
  async run({ quick, log }) {
    const tok = createQwen3Tokenizer();
    const tools = [{ name: "ls", description: "Lists a directory", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }];
    const rows: Array<Array<string | number>> = [];
    const notes: string[] = [];
    const reps = quick ? 2 : 5;

    const ratios: number[] = [];
    let episodeMs = 0;
    let finalMs = 0;
    for (const p of episode(30, randomUUID())) tok.renderChat(p, { tools });
    for (let r = 0; r < reps; r++) {
      const prompts = episode(30, randomUUID());
      const t0 = performance.now();
      let last: ReturnType<typeof tok.renderChat> | null = null;
      for (const p of prompts) last = tok.renderChat(p, { tools });
      const e = performance.now() - t0;
      const text = tok.decode([...last!.segments.flatMap((s) => s.ids), ...last!.headerIds]);
      const t1 = performance.now();
      tok.encode(text);
      const f = performance.now() - t1;
      episodeMs += e / reps;
      finalMs += f / reps;
      ratios.push(e / f);
    }
    const ratio = median(ratios);
    rows.push(["30-call episode: all 30 prompts rendered", fmt(episodeMs), ""]);
    rows.push(["one tokenization of the final context", fmt(finalMs), ""]);
    rows.push([`ratio, median of ${reps} episodes (target <= 1.2)`, fmt(ratio), ratio <= 1.2 ? "met" : "NOT met"]);
    log(`30-call episode ${fmt(episodeMs)} ms vs final context ${fmt(finalMs)} ms (${fmt(ratio)}x)`);

    for (const n of quick ? [500] : [500, 1000, 2000]) {
      const conv = longConversation(n, randomUUID());
      const t = performance.now();
      tok.renderChat(conv);
      const cold = performance.now() - t;
      conv.push({ role: "user", content: "And now?" });
      const t2 = performance.now();
      tok.renderChat(conv);
      const warm = performance.now() - t2;
      rows.push([`${n} messages in one request: cold render (blocks the loop)`, fmt(cold), ""]);
      rows.push([`${n} messages, next call of the same episode (one new message)`, fmt(warm), ""]);
      log(`${n} messages: cold ${fmt(cold)} ms, next call ${fmt(warm)} ms`);
    }
    // What the server uses: the sliced rendering, with the longest time it held the event loop.
    const sliced = async (messages: ChatTurnMessage[]): Promise<{ total: number; longest: number }> => {
      let longest = 0;
      let last = performance.now();
      let running = true;
      const tick = () => {
        const now = performance.now();
        longest = Math.max(longest, now - last);
        last = now;
        if (running) setImmediate(tick);
      };
      setImmediate(tick);
      const t = performance.now();
      await tok.renderChatAsync!(messages);
      const total = performance.now() - t;
      running = false;
      return { total, longest: Math.max(longest, performance.now() - last) };
    };
    const blocks: number[] = [];
    for (const n of quick ? [500] : [500, 2000]) {
      const r = await sliced(longConversation(n, randomUUID()));
      blocks.push(r.longest);
      rows.push([`${n} messages, cold, sliced (as the server renders): total / longest event-loop block`, `${fmt(r.total)} / ${fmt(r.longest)}`, ""]);
    }
    const mb = quick ? 1 : 4;
    const big = "lorem ipsum dolor sit amet\n".repeat(Math.floor((mb * 1024 * 1024) / 27));
    const rb = await sliced([{ role: "user", content: `${big}${randomUUID()}` }]);
    blocks.push(rb.longest);
    rows.push([`one ${mb} MB message, sliced: total / longest event-loop block`, `${fmt(rb.total)} / ${fmt(rb.longest)}`, ""]);
    notes.push("Before (jinja render of every prefix, issue 29): 500 messages blocked the loop 1.0 s, 1,000 2.9 s, 2,000 8.8 s; one 4 MB message 6.1 s.");
    notes.push(`Longest event-loop block of a sliced render: ${fmt(Math.max(...blocks))} ms (target: a few ms). The one-pass rows above are renderChat, which tests and tools call; the server calls renderChatAsync.`);
    notes.push(`Load average at the end: ${loadavg()[0]!.toFixed(1)} on ${cpus().length} CPUs (shared with other work while this ran; a block is wall time, so a busy machine stretches it).`);
    return [{ title: "qwen3 render and tokenize (segments cached per message)", columns: ["case", "ms", "target"], rows, notes }];
  },
};
