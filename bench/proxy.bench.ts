import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { PerformanceObserver } from "node:perf_hooks";
import { join } from "node:path";
import { buildServer } from "../server/app/index.ts";
import { RunConfigSchema } from "../server/config/index.ts";
import { createZeroLatencyEngine } from "../test/doubles/zero-latency-engine.ts";
import { createEmbeddedTokenizer } from "../server/tokenizers/index.ts";
import { type Bench, type BenchTable, fmt, quantile } from "./harness.ts";

/**
 * The proxy's own overhead in a long-running server: a chat completion against the zero-latency engine (a
 * test double with no model), over real loopback sockets with keep-alive, recorded to a run.db file like
 * any call. What is left is HTTP, validation, templating, tokenizing, the tracker's write and the response.
 *
 * Steady state, as users meet a server that has been up a while: one server holds both routes for the
 * whole bench and one load process (a separate Node process: it shares neither the event loop nor the
 * heap) drives every run, both warmed up first. Each of the load's loops plays episodes of
 * `EPISODE_CALLS` calls, one fresh episode key after another, and ends each over HTTP as a client does
 * (the baseline's loops send the same request to a bare route), so the server holds what a live one
 * holds: the episodes in flight, not every episode of the run. (Until 2026-12-07 the episodes stayed live
 * until the run was over, and the server's heap grew to about 300 MB of recorded calls over a run.)
 * (Runs of 5,000 calls, each on a fresh server and a fresh
 * load process, measured mostly JIT warm-up: the bare route ran at half its warm speed, and the ratio at
 * concurrency 64 came out near 0.8x where the warm one is near 0.55x.)
 *
 * Two shapes of episode (`bodies`): the same short conversation on every call, and an agent's growing one.
 * CPU is split per thread from /proc (the event loop's thread, the server's other threads, the load
 * process): on 2 CPUs they share the machine, so throughput follows their sum, not the event loop's alone.
 */

const tok = createEmbeddedTokenizer();
const REPLY = tok.encode("The answer is 42.<|im_end|>");
/** Calls per episode key (a short agent episode). */
const EPISODE_CALLS = 30;

// Plain JS for the load process (no TypeScript loader there): jobs arrive on stdin, one JSON line each, and
// each result leaves on stdout as one JSON line. A job runs `concurrency` loops; each sends `perKey` calls
// with a key, then ends that key's episode (`endPath` with the episode's id; the admin token, which owns episodes the bench registered in-process), as an
// agent's client does, and takes the next unused key of `keys`; a loop's n-th call sends
// `bodies[n % bodies.length]`. Throughput counts chat calls from the first call after the job's warm-up;
// latencies are the chat calls'.
const CLIENT = `
const http = require("node:http");
const readline = require("node:readline");
const lines = readline.createInterface({ input: process.stdin });
let queue = Promise.resolve();
lines.on("line", (line) => { queue = queue.then(() => run(JSON.parse(line))).then(
  (r) => process.stdout.write(JSON.stringify(r) + "\\n"),
  (err) => process.stdout.write(JSON.stringify({ error: String(err) }) + "\\n")); });
async function run({ port, concurrency, keys, episodes, bodies, total, warmup, path, perKey, endPath, endToken }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const post = (key, body, to = path) => new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path: to, method: "POST", agent,
      headers: { authorization: "Bearer " + key, "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => { res.resume(); res.on("end", () => resolve(res.statusCode)); });
    req.on("error", reject);
    req.end(body);
  });
  const END = JSON.stringify({ rewards: { solver: 1 } });
  const end = async (k) => {
    const status = await post(endToken, END, endPath.replace(":id", episodes[k]));
    if (status !== 200) throw new Error("end: status " + status);
  };
  const latencies = [];
  let next = 0;
  let t0 = 0;
  let nextKey = 0;
  const loop = async () => {
    let k = nextKey++;
    let key = keys[k];
    for (let n = 0; next < total + warmup; n++) {
      if (n > 0 && n % perKey === 0) {
        await end(k);
        k = nextKey++;
        key = keys[k];
      }
      const i = next++;
      if (i === warmup) t0 = performance.now();
      const t = performance.now();
      const status = await post(key, bodies[n % bodies.length]);
      if (status !== 200) throw new Error("status " + status);
      if (i >= warmup) latencies.push(performance.now() - t);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, loop));
  } finally {
    agent.destroy();
  }
  return { latencies, seconds: (performance.now() - t0) / 1000 };
}
`;

/** The load process, kept for the whole bench (its JIT warm, like a client that has been running a while). */
class LoadProcess {
  private readonly child = spawn(process.execPath, ["-e", CLIENT], { stdio: ["pipe", "pipe", "inherit"] });
  private buffered = "";
  private waiting: Array<(line: string) => void> = [];

  constructor() {
    this.child.stdout.on("data", (d: Buffer) => {
      this.buffered += d.toString();
      for (let nl = this.buffered.indexOf("\n"); nl >= 0; nl = this.buffered.indexOf("\n")) {
        const line = this.buffered.slice(0, nl);
        this.buffered = this.buffered.slice(nl + 1);
        this.waiting.shift()?.(line);
      }
    });
  }

  run(job: Record<string, unknown>): Promise<{ latencies: number[]; seconds: number }> {
    return new Promise((resolve, reject) => {
      const onExit = () => reject(new Error("the load process exited"));
      this.child.once("exit", onExit);
      this.waiting.push((line) => {
        this.child.off("exit", onExit);
        const m = JSON.parse(line) as { latencies: number[]; seconds: number } | { error: string };
        if ("error" in m) reject(new Error(`load process: ${m.error}`));
        else resolve(m);
      });
      this.child.stdin.write(`${JSON.stringify(job)}\n`);
    });
  }

  /** The load process's CPU time so far, microseconds (Linux), or null. */
  cpuUs(): number | null {
    return this.child.pid === undefined ? null : statCpuUs(`/proc/${this.child.pid}/stat`);
  }

  close(): void {
    this.child.stdin.end();
  }
}

/** Clock ticks per second of /proc's CPU times (Linux's USER_HZ). */
const TICKS_PER_S = 100;

/** utime + stime of a /proc stat file (a process's or one thread's), microseconds; null off Linux. */
function statCpuUs(file: string): number | null {
  try {
    const stat = readFileSync(file, "utf8");
    // fields after the command name (which may hold spaces), from field 3 on: utime and stime are 14 and 15
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_S;
  } catch {
    return null;
  }
}

/** The CPU time of this process's main thread (the server's event loop), microseconds; null off Linux. */
const eventLoopThreadCpuUs = (): number | null => statCpuUs(`/proc/self/task/${process.pid}/stat`);

interface Measured {
  p50: number;
  p99: number;
  rps: number;
  n: number;
  /** The server process's CPU (all its threads: event loop, writer thread, GC helpers), microseconds per call. */
  cpuUs: number;
  /** The server's event loop busy time, microseconds per call (what bounds its throughput). */
  loopUs: number;
  /** Garbage collection on the event loop's heap, microseconds per call. */
  gcUs: number;
  /** CPU of the event loop's own thread, of the server's other threads (writer thread, GC helpers), and of the load process, microseconds per call (null off Linux). */
  threads: { loop: number; others: number; load: number } | null;
}

/** A canned chat completion of the same size, for the baseline route (HTTP and JSON only, no proxy work). */
const CANNED = {
  id: "chatcmpl-00000000-0000-0000-0000-000000000000",
  object: "chat.completion",
  created: 0,
  model: "main",
  system_fingerprint: "agentjet-v0",
  choices: [{ index: 0, message: { role: "assistant", content: "The answer is 42.", refusal: null }, logprobs: null, finish_reason: "stop" }],
  usage: { prompt_tokens: 120, completion_tokens: 18, total_tokens: 138 },
};

/** What the load sends call after call in an episode (`EPISODE_CALLS` calls). */
type Shape = "repeat" | "multi-turn";

const SYSTEM = { role: "system", content: "You are a helpful assistant." };
const ANSWER = "The answer is 42.";

/**
 * Each call's body, by its place in the episode. `repeat`: the same short conversation on every call
 * (what the proxy itself costs, the prompt cached). `multi-turn`: an agent's episode, each call the one
 * before it plus the policy's answer and a new user turn (30 calls: up to 61 messages, about 2.5 KB), so
 * rendering, splicing the earlier answers and recording grow with the conversation as they do for agents.
 */
function bodies(shape: Shape): string[] {
  const question = (i: number) => ({ role: "user", content: `Step ${i}: what is six times seven? Answer briefly.` });
  if (shape === "repeat") return [JSON.stringify({ model: "main", messages: [SYSTEM, question(0)] })];
  return Array.from({ length: EPISODE_CALLS }, (_, k) => {
    const messages: unknown[] = [SYSTEM];
    for (let i = 0; i < k; i++) messages.push(question(i), { role: "assistant", content: ANSWER });
    messages.push(question(k));
    return JSON.stringify({ model: "main", messages });
  });
}

const BASELINE = "/bench/baseline";
const PROXY = "/v1/chat/completions";
/** Where the load ends an episode: the server's own route for the proxy, a bare route for the baseline. */
const END_PATHS = { [PROXY]: "/v1/episodes/:id/end", [BASELINE]: "/bench/baseline-end/:id" };

/** The server under test (both routes) and the load process, for the whole bench. */
class Setup {
  private episodes = 0;

  private constructor(
    private readonly app: Awaited<ReturnType<typeof buildServer>>,
    private readonly dir: string,
    private readonly port: number,
    private readonly load: LoadProcess,
  ) {}

  static async start(): Promise<Setup> {
    const config = RunConfigSchema.parse({
      policies: { main: { tokenizer: "embedded" } },
      environments: [{ name: "bench", roles: { solver: "main" } }],
      sampling: { maxTokens: 64 },
    });
    const dir = mkdtempSync(join(tmpdir(), "aj-proxy-bench-"));
    const app = await buildServer({ config, dbPath: join(dir, "run.db"), keySecret: "bench", reclaimTimer: false, engines: { main: createZeroLatencyEngine({ defaultIds: REPLY }) } });
    app.post(BASELINE, { config: { auth: "public" } }, async () => CANNED);
    app.post("/bench/baseline-end/:id", { config: { auth: "public" } }, async () => ({ episode: { state: "ended" } }));
    await app.listen({ host: "127.0.0.1", port: 0 });
    return new Setup(app, dir, (app.server.address() as { port: number }).port, new LoadProcess());
  }

  /** Episode keys for `calls` calls by `concurrency` loops, EPISODE_CALLS calls per episode (a loop's last one may end early). */
  private keys(concurrency: number, calls: number): { keys: string[]; episodes: string[] } {
    const store = this.app.agentjet.store;
    const keys: string[] = [];
    const episodes: string[] = [];
    for (let j = Math.ceil(calls / EPISODE_CALLS) + concurrency; j > 0; j--) {
      const episodeId = `bench-${++this.episodes}`;
      store.register({ episodeId, taskId: "t", env: "bench", agents: { solver: { kind: "policy", target: "main" } } });
      const c = store.claim({ episodeId });
      if (c.kind !== "claimed") throw new Error("claim failed");
      keys.push(c.keys.solver!);
      episodes.push(episodeId);
    }
    return { keys, episodes };
  }

  async measure(concurrency: number, total: number, path: string, log: (l: string) => void, shape: Shape = "repeat"): Promise<Measured> {
    const warmup = Math.min(1000, Math.floor(total / 5));
    // the baseline route takes no key; its loops send keys and end episodes all the same, so both send the same requests
    const { keys, episodes } =
      path === PROXY ? this.keys(concurrency, total + warmup) : { keys: Array.from({ length: Math.ceil((total + warmup) / EPISODE_CALLS) + concurrency }, () => "sk-aj-baseline"), episodes: [] as string[] };
    let gcMs = 0;
    const gc = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) gcMs += e.duration;
    });
    gc.observe({ entryTypes: ["gc"] });
    const cpu0 = process.cpuUsage();
    const loop0 = eventLoopThreadCpuUs();
    const load0 = this.load.cpuUs();
    const elu0 = performance.eventLoopUtilization();
    const job = {
      port: this.port,
      concurrency,
      keys,
      episodes: path === PROXY ? episodes : keys.map((_, i) => `b${i}`),
      bodies: bodies(shape),
      total,
      warmup,
      path,
      perKey: EPISODE_CALLS,
      endPath: END_PATHS[path as keyof typeof END_PATHS],
      endToken: this.app.agentjet.auth.adminToken,
    };
    const result = await this.load.run(job);
    const cpu = process.cpuUsage(cpu0);
    const loop1 = eventLoopThreadCpuUs();
    const load1 = this.load.cpuUs();
    const elu = performance.eventLoopUtilization(elu0);
    gc.disconnect();
    const calls = total + warmup;
    // each loop's last episode is cut short by the run's end: aborted, out of the measured time
    const store = this.app.agentjet.store;
    for (const id of episodes) if (store.get(id)?.state === "claimed") store.abort(id, { kind: "cancelled", message: "bench run over" });
    const rps = total / result.seconds;
    log(`${path} concurrency ${concurrency} (${shape}): ${result.latencies.length} calls, ${fmt(rps)} req/s`);
    const serverUs = cpu.user + cpu.system;
    const threads =
      loop0 !== null && loop1 !== null && load0 !== null && load1 !== null
        ? { loop: (loop1 - loop0) / calls, others: (serverUs - (loop1 - loop0)) / calls, load: (load1 - load0) / calls }
        : null;
    return {
      p50: quantile(result.latencies, 0.5),
      p99: quantile(result.latencies, 0.99),
      rps,
      n: result.latencies.length,
      cpuUs: (cpu.user + cpu.system) / calls,
      loopUs: (elu.active * 1000) / calls,
      gcUs: (gcMs * 1000) / calls,
      threads,
    };
  }

  async close(): Promise<void> {
    this.load.close();
    await this.app.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export const bench: Bench = {
  name: "proxy",
  async run({ quick, log }) {
    const setup = await Setup.start();
    try {
      return await runAll(setup, quick, log);
    } finally {
      await setup.close();
    }
  },
};

/** The table's CPU columns of one run: per-thread when /proc has them. */
function cpuCells(m: Measured): string[] {
  const t = m.threads;
  return [fmt(m.cpuUs), t ? fmt(t.loop) : "", t ? fmt(t.others) : "", t ? fmt(t.load) : "", fmt(m.loopUs), fmt(m.gcUs)];
}

async function runAll(setup: Setup, quick: boolean, log: (l: string) => void): Promise<BenchTable[]> {
  // Profiling mode: only `route` at one concurrency (after the warm-up), so a `node --cpu-prof` of this (the
  // server's) process holds the request path and little else.
  // BENCH_PROXY_PROFILE=<concurrency>[:<calls>][:baseline|:proxy][:multi-turn].
  const profile = process.env.BENCH_PROXY_PROFILE;
  const warmCalls = quick ? 5_000 : 20_000;
  // JIT warm-up for both routes, both shapes, and the load process first, unmeasured: a server that has been
  // up a while has compiled its request path (fastify, zod, our modules), and so has a client that has been running.
  for (const shape of ["repeat", "multi-turn"] as const) for (const path of [BASELINE, PROXY]) await setup.measure(64, warmCalls / 2, path, log, shape);
  if (profile) {
    const [c, calls, route, shape] = profile.split(":");
    const path = route === "baseline" ? BASELINE : PROXY;
    const m = await setup.measure(Number(c), Number(calls || 40_000), path, log, shape === "multi-turn" ? "multi-turn" : "repeat");
    const columns = ["calls", "p50 ms", "req/s", "server CPU us/call", "event-loop thread CPU us/call", "other server threads CPU us/call", "load process CPU us/call", "event loop us/call", "GC us/call"];
    return [{ title: `Profile run: ${path} at concurrency ${c}`, columns, rows: [[m.n, fmt(m.p50), fmt(m.rps), ...cpuCells(m)]] }];
  }
  const loadAtStart = loadavg()[0]!;
  const rows: Array<Array<string | number>> = [];
  const notes: string[] = [];
  const ratios: string[] = [];
  // Pairs of side-by-side runs in alternating order; the table shows the pair with the median ratio.
  const pairs = quick ? 1 : 5;
  const runs: Array<{ c: number; shape: Shape }> = [
    { c: 1, shape: "repeat" },
    { c: 64, shape: "repeat" },
    { c: 256, shape: "repeat" },
    { c: 64, shape: "multi-turn" },
  ];
  for (const { c, shape } of runs) {
    // about a second or more of calls a run at each concurrency (concurrency 1 runs at a fifth the rate)
    const total = (quick ? 0.25 : 1) * (c === 1 ? 5_000 : 20_000);
    const measured: Array<{ base: Measured; r: Measured }> = [];
    for (let i = 0; i < pairs; i++) {
      const first = await setup.measure(c, total, i % 2 === 0 ? BASELINE : PROXY, log, shape);
      const second = await setup.measure(c, total, i % 2 === 0 ? PROXY : BASELINE, log, shape);
      measured.push(i % 2 === 0 ? { base: first, r: second } : { base: second, r: first });
    }
    measured.sort((a, b) => a.r.rps / a.base.rps - b.r.rps / b.base.rps);
    const { base, r } = measured[Math.floor(measured.length / 2)]!;
    const added50 = r.p50 - base.p50;
    const added99 = r.p99 - base.p99;
    rows.push([c, shape, "baseline (fastify route, canned JSON)", base.n, fmt(base.p50), fmt(base.p99), fmt(base.rps), "", "", ...cpuCells(base)]);
    rows.push([c, shape, "chat completion via the proxy", r.n, fmt(r.p50), fmt(r.p99), fmt(r.rps), fmt(added50), fmt(added99), ...cpuCells(r)]);
    const verdict = (x: number, target: number) => `${fmt(x)} ms (target < ${target} ms: ${x < target ? "met" : "NOT met"})`;
    const all = measured.map((m) => `${fmt(m.r.rps / m.base.rps)}x`).join(", ");
    const loopRatio = r.threads && base.threads ? `, event-loop thread CPU per call ${fmt(r.threads.loop / base.threads.loop)}x` : "";
    ratios.push(
      `concurrency ${c}, ${shape}: ${fmt(r.rps / base.rps)}x the bare route's throughput (median of ${pairs} pair${pairs > 1 ? "s" : ""}: ${all}; target >= 0.8: ${r.rps / base.rps >= 0.8 ? "met" : "NOT met"}); server CPU per call ${fmt(r.cpuUs / base.cpuUs)}x the bare route's${loopRatio}`,
    );
    notes.push(`concurrency ${c}, ${shape}: added p50 ${verdict(added50, 1)}, added p99 ${verdict(added99, 5)}; proxy round trip p50 ${fmt(r.p50)} ms`);
  }
  notes.push(...ratios);
  notes.push("Added latency = the proxy's round trip minus a bare fastify route's on the same server, socket and client (auth, validation, templating, tokenizing, recording, the completion JSON). At concurrency 64 both are mostly queueing on one event loop. LiteLLM's documented median added latency is 3.25 ms.");
  notes.push(
    `Steady state: one server and one load process for the whole bench, both routes and both shapes first warmed up unmeasured (${warmCalls / 2} calls each at concurrency 64), then each run's own warm-up (a fifth of its calls, at most 1,000). The proxy's loops play episodes of ${EPISODE_CALLS} calls each, a fresh key per episode, and end each one (POST /v1/episodes/:id/end, answered once its calls are committed); the baseline's loops send the same bodies and the same end requests to bare routes. Throughput counts chat calls; the ends take their share of the time.`,
  );
  notes.push(
    "Shapes: repeat = the same two short messages on every call (the proxy's own cost, its prompt cached); multi-turn = an agent's episode, each call the one before plus the policy's answer and a new question (up to 61 messages), so rendering, splicing earlier answers and recording grow with the conversation.",
  );
  notes.push(
    "CPU per call: server = the whole server process (event loop, the tracker's writer thread, GC helpers), then split into its event-loop thread and its other threads, and the load process's (all from /proc, each run's warm-up included); event loop = its busy wall time per call; GC = collection pauses on the event loop. On 2 CPUs the server's threads and the load process share the machine, so every thread's CPU costs throughput, not the event loop's alone.",
  );
  notes.push(`Load average: ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end, on ${cpus().length} CPUs (shared with other work while this ran).`);
  const columns = ["concurrency", "shape", "route", "calls", "p50 ms", "p99 ms", "req/s", "added p50 ms", "added p99 ms", "server CPU us/call", "event-loop thread CPU us/call", "other server threads CPU us/call", "load process CPU us/call", "event loop us/call", "GC us/call"];
  return [{ title: "Proxy overhead per chat completion (zero-latency engine, loopback, keep-alive, steady state)", columns, rows, notes }];
}
