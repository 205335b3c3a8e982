import { randomUUID } from "node:crypto";
import { cpus, loadavg } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { type ChatTurnMessage, closeEncodePool, createQwen3Tokenizer } from "../server/tokenizers/index.ts";
import { type Bench, fmt, median } from "./harness.ts";

/**
 * The qwen3 render as an episode meets it: call k's prompt is calls 1..k-1's messages plus new ones, so
 * with per-message segments cached an episode should cost about one tokenization of its final context.
 * Also the longest time one large request holds the event loop (perf_hooks' monitorEventLoopDelay) in
 * renderChatAsync, which the server calls: large new text is tokenized on the encode thread.
 */

/** Runs `work` with the event loop's delay monitored: its wall time and the longest block, in ms. */
async function blocking<T>(work: () => Promise<T>): Promise<{ total: number; longest: number; value: T }> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const t = performance.now();
  const value = await work();
  const total = performance.now() - t;
  // one more turn so the last stretch of work is sampled
  await new Promise((resolve) => setTimeout(resolve, 5));
  h.disable();
  return { total, longest: h.max / 1e6, value };
}

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

    // The episode as the server renders it (renderChatAsync), against one tokenization of its final context.
    const ratios: number[] = [];
    const episodeBlocks: number[] = [];
    let episodeMs = 0;
    let finalMs = 0;
    for (const p of episode(30, randomUUID())) await tok.renderChatAsync!(p, { tools });
    for (let r = 0; r < reps; r++) {
      const prompts = episode(30, randomUUID());
      const run = await blocking(async () => {
        let last: Awaited<ReturnType<NonNullable<typeof tok.renderChatAsync>>> | null = null;
        for (const p of prompts) last = await tok.renderChatAsync!(p, { tools });
        return last!;
      });
      const e = run.total;
      episodeBlocks.push(run.longest);
      const text = tok.decode([...run.value.segments.flatMap((s) => s.ids), ...run.value.headerIds]);
      const t1 = performance.now();
      tok.encode(text);
      const f = performance.now() - t1;
      episodeMs += e / reps;
      finalMs += f / reps;
      ratios.push(e / f);
    }
    const ratio = median(ratios);
    rows.push(["30-call episode: all 30 prompts rendered (renderChatAsync, as the server does)", fmt(episodeMs), ""]);
    rows.push(["one tokenization of the final context", fmt(finalMs), ""]);
    rows.push([`ratio, median of ${reps} episodes (target <= 1.2)`, fmt(ratio), ratio <= 1.2 ? "met" : "NOT met"]);
    rows.push(["30-call episode: longest event-loop block (median of episodes)", fmt(median(episodeBlocks)), ""]);
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
    // What the server uses: renderChatAsync (new text past a few KB goes to the encode thread).
    const sliced = async (messages: ChatTurnMessage[]) => blocking(() => tok.renderChatAsync!(messages));
    // The encode thread starts (and loads its tokenizer) on the first large request: measured on its own.
    const start = await sliced([{ role: "user", content: `${"warm up the encode thread. ".repeat(400)}${randomUUID()}` }]);
    rows.push(["first large request (starts the encode thread): total / longest event-loop block", `${fmt(start.total)} / ${fmt(start.longest)}`, ""]);
    const blocks: number[] = [];
    for (const n of quick ? [500] : [500, 2000]) {
      const r = await sliced(longConversation(n, randomUUID()));
      blocks.push(r.longest);
      rows.push([`${n} messages, cold, renderChatAsync (as the server renders): total / longest event-loop block`, `${fmt(r.total)} / ${fmt(r.longest)}`, ""]);
    }
    const mb = quick ? 1 : 4;
    const big = "lorem ipsum dolor sit amet\n".repeat(Math.floor((mb * 1024 * 1024) / 27));
    const rb = await sliced([{ role: "user", content: `${big}${randomUUID()}` }]);
    blocks.push(rb.longest);
    rows.push([`one ${mb} MB message, renderChatAsync: total / longest event-loop block`, `${fmt(rb.total)} / ${fmt(rb.longest)}`, ""]);
    notes.push("Before (jinja render of every prefix, issue 29): 500 messages blocked the loop 1.0 s, 1,000 2.9 s, 2,000 8.8 s; one 4 MB message 6.1 s.");
    // The floor: the same monitor over an idle second (a loaded machine deschedules the thread now and then).
    const idle = await blocking(() => new Promise((resolve) => setTimeout(resolve, 1000)));
    rows.push(["idle event loop for 1 s (the machine's floor): longest delay", fmt(idle.longest), ""]);
    const worst = Math.max(...blocks, ...episodeBlocks);
    notes.push(`Longest event-loop block of renderChatAsync (monitorEventLoopDelay, 1 ms resolution): ${fmt(worst)} ms (target: a few ms, <= 5: ${worst <= 5 ? "met" : "NOT met"}; the idle loop's floor in the same run: ${fmt(idle.longest)} ms). The one-pass rows are renderChat, which tests and tools call; the server calls renderChatAsync.`);
    await closeEncodePool();
    notes.push(`Load average at the end: ${loadavg()[0]!.toFixed(1)} on ${cpus().length} CPUs (shared with other work while this ran; a block is wall time, so a busy machine stretches it).`);
    return [{ title: "qwen3 render and tokenize (segments cached per message)", columns: ["case", "ms", "target"], rows, notes }];
  },
};
