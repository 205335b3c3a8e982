import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { constants, PerformanceObserver } from "node:perf_hooks";
import { deserialize, serialize } from "node:v8";
import { buildServer } from "../server/app/index.ts";
import { RunConfigSchema } from "../server/config/index.ts";
import { type ChatTurnMessage, closeEncodePool, createQwen3Tokenizer, type PromptSegment, promptIds } from "../server/tokenizers/index.ts";
// what no entry offers: a string over shared memory, the packing of text for the encode thread and of calls for the writer thread
import { externalString } from "../server/app/external-string.ts";
import { packSegments } from "../server/tokenizers/shared-text.ts";
import { packCallsSliced, WireMemory } from "../server/tracker/call-wire.ts";
import type { TrackedCall } from "../server/tracker/index.ts";
import { createZeroLatencyEngine } from "../test/doubles/zero-latency-engine.ts";
import { type Bench, fmt, median, timeRuns } from "./harness.ts";

/**
 * The qwen3 render as an episode meets it: call k's prompt is calls 1..k-1's messages plus new ones, so
 * with per-message segments cached an episode should cost about one tokenization of its final context.
 * Also the longest time one large request holds the event loop, in renderChatAsync (which the server
 * calls: large new text is tokenized on the encode thread) and through a whole server, with a breakdown
 * of the passes a 4 MB message makes on the event loop.
 */

/** How long the main thread has waited for a CPU so far, in ms (Linux's schedstat; NaN elsewhere). */
function mainThreadWaitMs(): number {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ")[1]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

interface Blocking {
  total: number;
  longest: number;
  longestCpu: number;
  /** The longest busy stretch (see `blocking`), and the collection pause in it, ms (its kind: "minor" a scavenge, "major" a mark-compact). */
  longestBusy: number;
  busyGc: number;
  busyGcKind: string;
  /** The longest busy stretch in which no collection began, ms. */
  longestBusyNoGc: number;
}

const SHOWN = "total / longest block / longest on-CPU / longest busy stretch";

/** `total / longest block / longest on-CPU / longest busy stretch`, ms, and the collection pause in that stretch when there was one. */
const show = (b: Blocking) =>
  `${fmt(b.total)} / ${fmt(b.longest)} / ${fmt(b.longestCpu)} / ${fmt(b.longestBusy)}${b.busyGc > 0.5 ? ` (${b.busyGcKind} GC ${fmt(b.busyGc)}; without a GC ${fmt(b.longestBusyNoGc)})` : ""}`;

/**
 * Runs `work` while a 1 ms timer samples the event loop: its wall time, the longest gap between two turns
 * of the timer (`longest`: wall time, which a busy machine stretches while the thread waits for a CPU),
 * that gap less the time the main thread waited for a CPU in it (`longestCpu`), and the longest busy
 * stretch (`longestBusy`): the time the loop spent outside its poll for events between two turns of the
 * timer (event-loop utilization's active time), less the time it waited for a CPU meanwhile. That is the
 * work the loop did in one go, whatever the load; `longestCpu` also counts the loop asleep in its poll
 * past the timer's turn, which on these machines happens for 4-10 ms every half second or so while
 * another thread is busy, with the loop idle. `busyGc`: the collection pauses that began in that stretch.
 * (perf_hooks' monitorEventLoopDelay misses a block that starts as it is enabled; this timer's first turn
 * is measured from the start.)
 */
async function blocking<T>(work: () => Promise<T>): Promise<Blocking & { value: T }> {
  let last = { at: performance.now(), waited: mainThreadWaitMs(), elu: performance.eventLoopUtilization() };
  let longest = 0;
  let longestCpu = 0;
  const stretches: Array<{ from: number; to: number; busy: number }> = [];
  let sampling = true;
  const sample = () => {
    const now = { at: performance.now(), waited: mainThreadWaitMs(), elu: performance.eventLoopUtilization() };
    const waited = now.waited - last.waited;
    longest = Math.max(longest, now.at - last.at);
    longestCpu = Math.max(longestCpu, now.at - last.at - waited);
    stretches.push({ from: last.at, to: now.at, busy: performance.eventLoopUtilization(now.elu, last.elu).active - waited });
    last = now;
    if (sampling) setTimeout(sample, 1);
  };
  const pauses: Array<{ at: number; ms: number; kind: number }> = [];
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) pauses.push({ at: e.startTime, ms: e.duration, kind: (e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0 });
  });
  gc.observe({ entryTypes: ["gc"] });
  setTimeout(sample, 1);
  const t = performance.now();
  const value = await work();
  const total = performance.now() - t;
  // one more turn so the last stretch of work is sampled
  await new Promise((resolve) => setTimeout(resolve, 5));
  sampling = false;
  gc.disconnect();
  const pausesIn = (s: { from: number; to: number }) => pauses.filter((p) => p.at >= s.from && p.at < s.to);
  const worst = stretches.reduce((w, s) => (s.busy > w.busy ? s : w), { from: 0, to: 0, busy: 0 });
  const inWorst = pausesIn(worst);
  const busyGcKind = inWorst.some((p) => p.kind !== constants.NODE_PERFORMANCE_GC_MINOR) ? "major" : "minor";
  const longestBusyNoGc = Math.max(0, ...stretches.filter((s) => pausesIn(s).length === 0).map((s) => s.busy));
  return { total, longest, longestCpu, longestBusy: worst.busy, busyGc: inWorst.reduce((sum, p) => sum + p.ms, 0), busyGcKind, longestBusyNoGc, value };
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


/** A client in its own process: builds a `mb` MB message, then POSTs it on each "go" line and prints the status. */
const CLIENT = `
const [url, key, mb] = process.argv.slice(1);
const content = "lorem ipsum dolor sit amet\\n".repeat(Math.floor((Number(mb) * 1024 * 1024) / 27));
let n = 0;
const post = async () => {
  const body = JSON.stringify({ model: "main", messages: [{ role: "user", content: content + (n++) + crypto.randomUUID() }] });
  const r = await fetch(url, { method: "POST", headers: { authorization: "Bearer " + key, "content-type": "application/json" }, body });
  await r.text();
  process.stdout.write(r.status + "\\n");
};
process.stdin.on("data", () => void post());
process.stdout.write("ready\\n");
`;

/** Large requests measured after the first one (a server that has served one already). */
const NEXT_REQUESTS = 4;

/**
 * One `mb` MB message through a real server as a client sends it (the client is another process): the
 * longest event-loop block of the server from the request to its recording (the tracker writes in
 * batches 100 ms later), for the first large request after the server started and for the next
 * `NEXT_REQUESTS`, one after another (the same episode, each a new message).
 */
async function serverRequests(mb: number): Promise<Array<Blocking & { status: string }>> {
  const dir = mkdtempSync(join(tmpdir(), "agentjet-render-bench-"));
  const config = RunConfigSchema.parse({
    policies: { main: { tokenizer: "qwen3" } },
    environments: [{ name: "bench", roles: { solver: "main" } }],
    server: { bodyLimitBytes: 64 << 20 },
  });
  const app = await buildServer({ config, dbPath: join(dir, "run.db"), keySecret: "bench", reclaimTimer: false, engines: { main: createZeroLatencyEngine() } });
  let client: ReturnType<typeof spawn> | undefined;
  try {
    const base = await app.listen({ host: "127.0.0.1", port: 0 });
    const store = app.agentjet.store;
    store.register({ episodeId: "e1", taskId: "t", env: "bench", agents: { solver: { kind: "policy", target: "main" } } });
    const claim = store.claim();
    if (claim.kind !== "claimed") throw new Error("no claim");
    const worker = spawn(process.execPath, ["-e", CLIENT, `${base}/v1/chat/completions`, claim.keys.solver!, String(mb)], { stdio: ["pipe", "pipe", "inherit"] });
    client = worker;
    const lines: string[] = [];
    let wake: (() => void) | null = null;
    worker.stdout.setEncoding("utf8").on("data", (d: string) => {
      lines.push(...d.split("\n").filter((l) => l.length > 0));
      wake?.();
    });
    const nextLine = async () => {
      while (lines.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      return lines.shift()!;
    };
    await nextLine();
    const out: Array<Blocking & { status: string }> = [];
    for (let i = 0; i < 1 + NEXT_REQUESTS; i++) {
      const r = await blocking(async () => {
        worker.stdin.write("go\n");
        const status = await nextLine();
        await new Promise((resolve) => setTimeout(resolve, 300));
        return status;
      });
      const { value, ...measured } = r;
      out.push({ ...measured, status: value });
    }
    return out;
  } finally {
    client?.kill();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Median milliseconds of `fn` over 3 runs (no warm-up). */
const timed = async (fn: () => unknown): Promise<number> => median(await timeRuns(3, fn, 0));

/** The longest stretch between two yields of `steps` (a generator run to its end, timed step by step), ms. */
function longestStep(steps: Generator<void, unknown, void>): number {
  let longest = 0;
  for (;;) {
    const t = performance.now();
    const r = steps.next();
    longest = Math.max(longest, performance.now() - t);
    if (r.done) return longest;
  }
}

/**
 * The whole-string passes one 4 MB message meets on the event loop, each timed alone: as the server did
 * them (one pass each) and what is left of each now (the longest stretch on the loop).
 */
async function stageRows(content: string, ids: PromptSegment["ids"]): Promise<Array<Array<string | number>>> {
  const body = Buffer.from(JSON.stringify({ model: "main", messages: [{ role: "user", content }] }));
  const parsed = serialize(JSON.parse(body.toString("utf8")));
  // the text as the JSON body thread hands it over (Latin-1 here), written as that thread writes it
  const shared = new Uint8Array(new SharedArrayBuffer(content.length));
  Buffer.from(shared.buffer).write(content, "latin1");
  const copy = Buffer.from(content).toString();
  const joinedKey = (c: string) => `\u0002<|im_start|>user\n\u0001${c}\u0002<|im_end|>\n`;
  // the text as packed for the encode thread: the longest stretch between two of its yields
  let textLongest = 0;
  let last = performance.now();
  await packSegments([[content]], async () => {
    textLongest = Math.max(textLongest, performance.now() - last);
    await new Promise((resolve) => setImmediate(resolve));
    last = performance.now();
  });
  textLongest = Math.max(textLongest, performance.now() - last);
  const int32 = Int32Array.from(ids);
  const plain = Array.from(ids);
  const call: TrackedCall = {
    callId: "c",
    episodeId: "e",
    agentId: "solver",
    policy: "main",
    trainable: true,
    seq: 0,
    messages: [{ role: "user", content }],
    tools: null,
    segments: [{ role: "user", text: content, ids }],
    headerIds: [1, 2, 3],
    outputIds: [],
    outputLogprobs: [],
    outputText: "",
    finishReason: "overflow",
    version: 0,
    startedAt: 0,
    latencyMs: 0,
  };
  return [
    [
      "request body: JSON.parse on the loop (fastify's default parser), then its chunks joined / now: the chunks moved to the JSON body thread uncopied, the message's text received from it as a string over its shared memory (until 2026-12-07: each 64 KB chunk copied into one buffer, the parsed body received as a structured clone, the text one allocation)",
      fmt(await timed(() => JSON.parse(body.toString("utf8")))),
      fmt(externalString === null ? await timed(() => deserialize(parsed)) : await timed(() => externalString!(shared))),
    ],
    ["segment cache: the message joined into its key, looked up against an equal one (both flattened, compared) / now: length in the key, the text compared", fmt(await timed(() => new Map([[joinedKey(content), 1]]).get(joinedKey(copy)))), fmt(await timed(() => content === copy))],
    [
      "text to the encode thread: one structured clone of the joined run / now: a 128K-char slice written into shared memory, a chunk of its UTF-8 allocated when the last is full (a few hundred KB, three bytes per character, until 2026-12-07) (longest stretch)",
      fmt(await timed(() => serialize(`user\n${content}`))),
      fmt(textLongest),
    ],
    [`ids back from the encode thread (${ids.length} ids): structured clone / now: shared memory`, fmt(await timed(() => deserialize(serialize(int32)))), "0"],
    [
      "ids copied into the segment's array (qwen3): one pass / now: none, the segment's ids are the encode thread's view of shared memory",
      fmt(await timed(() => Array.from(int32))),
      "0",
    ],
    [
      "prompt ids joined for the engine (complete-policy): one [].concat / now: not joined when the prompt overflows the context (this one); a prompt that fits is copied 16K ids a turn",
      fmt(await timed(() => ([] as number[]).concat(plain, [1, 2, 3]))),
      "0",
    ],
    [
      "the call to the tracker's writer thread: one structured clone (messages and segment text) with the ids copied into one moved Int32Array / now: packed a slice at a time, 64K chars or ids per turn into chunks of their own (longest step)",
      fmt(await timed(() => serialize({ messages: call.messages, segments: [{ role: "user", text: content, ids: Int32Array.from(ids) }] }))),
      fmt(longestStep(packCallsSliced([call], new WireMemory()))),
    ],
  ];
}

export const bench: Bench = {
  name: "render",
  async run({ quick, log }) {
    const mb = quick ? 1 : 4;
    // First, while nothing has started the tokenizer's threads: the server starts them (or the first request does).
    const served = await serverRequests(mb);
    log(`${mb} MB message through the server: ${served.map((r) => `${r.status} ${show(r)}`).join("; ")}`);
    const tok = createQwen3Tokenizer();
    const tools = [{ name: "ls", description: "Lists a directory", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }];
    const rows: Array<Array<string | number>> = [];
    const notes: string[] = [];
    const reps = quick ? 2 : 5;

    // The episode as the server renders it (renderChatAsync), against one tokenization of its final context.
    const ratios: number[] = [];
    const episodeBlocks: Blocking[] = [];
    let episodeMs = 0;
    let finalMs = 0;
    for (const p of episode(30, randomUUID())) await tok.renderChatAsync!(p, { tools });
    for (let r = 0; r < reps; r++) {
      const prompts = episode(30, randomUUID());
      // The episode's cost is its 30 renders alone: the turns of the loop between them (each call is its own
      // request) are not render time, so they are yielded outside the timed spans.
      let e = 0;
      const run = await blocking(async () => {
        let last: Awaited<ReturnType<NonNullable<typeof tok.renderChatAsync>>> | null = null;
        for (const p of prompts) {
          const t0 = performance.now();
          last = await tok.renderChatAsync!(p, { tools });
          e += performance.now() - t0;
          await new Promise((resolve) => setImmediate(resolve));
        }
        return last!;
      });
      episodeBlocks.push(run);
      const text = tok.decode(promptIds(run.value));
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
    rows.push(["30-call episode: longest block / longest on-CPU / longest busy stretch of the loop (median of episodes)", `${fmt(median(episodeBlocks.map((b) => b.longest)))} / ${fmt(median(episodeBlocks.map((b) => b.longestCpu)))} / ${fmt(median(episodeBlocks.map((b) => b.longestBusy)))}`, ""]);
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
    const blocks: Blocking[] = [];
    for (const n of quick ? [500] : [500, 2000]) {
      const r = await sliced(longConversation(n, randomUUID()));
      blocks.push(r);
      rows.push([`${n} messages, cold, renderChatAsync (as the server renders): ${SHOWN}`, show(r), ""]);
    }
    // one flat string, as a parsed body gives it (the concatenation alone would be flattened on the loop on
    // first use, a 4 MB allocation that rows before 2026-12-07 counted as the render's)
    const content = JSON.parse(JSON.stringify(`${"lorem ipsum dolor sit amet\n".repeat(Math.floor((mb * 1024 * 1024) / 27))}${randomUUID()}`)) as string;
    const rb = await sliced([{ role: "user", content }]);
    blocks.push(rb);
    rows.push([`one ${mb} MB message, renderChatAsync: ${SHOWN}`, show(rb), "<= 5"]);
    rows.push([`one ${mb} MB message through the server (client in another process, body to recording), the first large request after start: status: ${SHOWN}`, `${served[0]!.status}: ${show(served[0]!)}`, "<= 5"]);
    served.slice(1).forEach((r, i) => rows.push([`the same, large request ${i + 2}`, `${r.status}: ${show(r)}`, "<= 5"]));
    const stages = await stageRows(content, rb.value.segments[0]!.ids);
    notes.push("Before (jinja render of every prefix, issue 29): 500 messages blocked the loop 1.0 s, 1,000 2.9 s, 2,000 8.8 s; one 4 MB message 6.1 s.");
    // The floor: the same monitor over an idle second (a loaded machine deschedules the thread now and then).
    const idle = await blocking(() => new Promise((resolve) => setTimeout(resolve, 1000)));
    rows.push([`idle event loop for 1 s (the machine's floor): ${SHOWN}`, show(idle), ""]);
    // What an array of the message's ids would cost: one allocation of fresh pages (V8 maps large objects
    // anew each time), in one go; the segment keeps the encode thread's view instead.
    const fresh = median(await timeRuns(3, () => new Array<number>(rb.value.segments[0]!.ids.length), 0));
    rows.push([`this machine: one array of ${rb.value.segments[0]!.ids.length} ids allocated (what copying the message's ids out of shared memory took; fresh pages, first written), median of 3`, fmt(fresh), ""]);
    const verdict = (b: readonly Blocking[]) => {
      const worst = b.reduce((w, x) => (x.longestBusy > w.longestBusy ? x : w));
      const gc = worst.busyGc > 0.5 ? ` (a ${worst.busyGcKind} collection of ${fmt(worst.busyGc)} ms began in it)` : "";
      const noGc = Math.max(...b.map((x) => x.longestBusyNoGc));
      return `${fmt(worst.longestBusy)} ms busy${gc} (target <= 5: ${worst.longestBusy <= 5 ? "met" : "NOT met"}); ${fmt(noGc)} ms in a stretch with no collection; block ${fmt(Math.max(...b.map((x) => x.longest)))} ms, on-CPU ${fmt(Math.max(...b.map((x) => x.longestCpu)))} ms`;
    };
    notes.push(
      `Block: the longest gap between two turns of a 1 ms timer, wall time, which a loaded machine stretches while the thread waits for a CPU (the idle loop's floor in the same run: ${fmt(idle.longest)} ms). On-CPU: that gap less the time the main thread waited for a CPU in it (Linux schedstat). Busy: the loop's active time in that gap (outside its poll for events) less that wait: the work the loop did in one go, whatever the load, the measure the targets are read on since 2026-12-07. On-CPU also counts the loop asleep in its poll past the timer's turn (4-10 ms every half second or so on these machines while another thread is busy, with the loop idle: it read 5.61 ms for the next request in the run before this one). A GC in parentheses: the collection pauses that began in the longest busy stretch.`,
    );
    notes.push(`renderChatAsync, longest: ${verdict([...blocks, ...episodeBlocks])}. The one-pass rows are renderChat, which tests and tools call; the server calls renderChatAsync.`);
    notes.push(`A whole ${mb} MB request through the server, body to recording: the first large request after start, ${verdict(served.slice(0, 1))}; the ${NEXT_REQUESTS} after it, ${verdict(served.slice(1))}.`);
    notes.push(
      `Nothing is written on the event loop in one go: the body's chunks move to the JSON body thread, and the message's text comes back from it as a string over the thread's shared memory (server/app/external-string.ts; ${externalString === null ? "NOT built in this run: the text crossed as a structured clone" : "built"}). Its ids stay in the encode thread's shared memory: an array of them would take ${fmt(fresh)} ms here (its fresh pages' first writes).`,
    );
    await closeEncodePool();
    notes.push(`Load average at the end: ${loadavg()[0]!.toFixed(1)} on ${cpus().length} CPUs (shared with other work while this ran; a block is wall time, so a busy machine stretches it).`);
    return [
      { title: "qwen3 render and tokenize (segments cached per message)", columns: ["case", "ms", "target"], rows, notes },
      {
        title: `Whole-string passes of one ${mb} MB message on the event loop, each timed alone (median of 3)`,
        columns: ["stage: as it was / as it is", "was: one pass, ms", "now: longest stretch on the loop, ms"],
        rows: stages,
      },
    ];
  },
};
