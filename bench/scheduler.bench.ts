import type { AddressInfo } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import Fastify from "fastify";
import WebSocket from "ws";
import type { ClaimOutcome, EpisodeRegistration, EpisodeRegistry } from "../hub/scheduler/index.ts";
import { registryFromEpisodeStore, Scheduler } from "../hub/scheduler/index.ts";
import { swarmPlugin } from "../hub/swarm/index.ts";
import { openRunDb } from "../server/db/index.ts";
import { createEpisodeStore } from "../server/index.ts";
import { type ClientMessage, parseFrame, type ServerMessage, ServerMessageSchema } from "../sdk/swarm/protocol.ts";
import { type Bench, fmt } from "./harness.ts";

/**
 * BENCH DOUBLE of the server's episode store: keys per claim and state per episode, nothing recorded.
 * It isolates the scheduler and the swarm protocol from the tracker's cost.
 */
class CountingRegistry implements EpisodeRegistry {
  readonly live = new Map<string, EpisodeRegistration>();
  register(input: EpisodeRegistration): void {
    this.live.set(input.episodeId, input);
  }
  claim(episodeId: string): ClaimOutcome {
    return { kind: "claimed", keys: { solver: `sk-bench-${episodeId}` } };
  }
  heartbeat(): void {}
  end(episodeId: string): void {
    this.live.delete(episodeId);
  }
  abort(episodeId: string): void {
    this.live.delete(episodeId);
  }
}

/** A simulated client on loopback: speaks the protocol and either ends each episode at once or holds it. */
class SimClient {
  readonly held: string[] = [];
  ended = 0;
  hold = false;
  #ws: WebSocket;
  ready: Promise<void>;

  constructor(url: string, id: string, concurrency: number) {
    this.#ws = new WebSocket(url);
    this.ready = new Promise((resolve) => {
      this.#ws.on("message", (data) => {
        const m = parseFrame(ServerMessageSchema, data.toString());
        if (!m.ok) return;
        const msg: ServerMessage = m.message;
        if (msg.type === "welcome") resolve();
        if (msg.type !== "assign") return;
        if (this.hold) this.held.push(msg.episode.episodeId);
        else this.#end(msg.episode.episodeId);
      });
    });
    this.#ws.on("open", () =>
      this.#send({ type: "hello", protocol: 1, clientId: id, envs: [{ name: "bench", version: "1.0.0", hash: "h" }], concurrency, running: [] }),
    );
  }

  release(): void {
    for (const id of this.held.splice(0)) this.#end(id);
  }

  close(): void {
    this.#ws.terminate();
  }

  #end(episodeId: string): void {
    this.ended += 1;
    this.#send({ type: "end", episodeId, rewards: { solver: 1 }, info: {} });
  }

  #send(m: ClientMessage): void {
    this.#ws.send(JSON.stringify(m));
  }
}

function gc(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

const mib = (bytes: number) => bytes / (1024 * 1024);

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error("bench: condition not met in time");
    await new Promise((r) => setImmediate(r));
  }
}

interface Measured {
  episodes: number;
  seconds: number;
  rate: number;
  batches: number;
  stale: number;
  heaps: number[];
  inFlight: number[];
}

async function measure(registry: EpisodeRegistry, quick: boolean, log: (line: string) => void, label: string): Promise<Measured> {
  const clients = 100;
  const concurrency = 10;
  const groupSize = 8;
  const batchTasks = (clients * concurrency) / groupSize;
  const tasks = Array.from({ length: 500 }, (_, i) => ({ id: `t${i}`, split: "train", data: { i } }));
  const scheduler = await Scheduler.create({
    environments: [{ name: "bench", version: "1.0.0", weight: 1, split: "train", agents: [{ id: "solver", role: "solver" }], roles: { solver: "policy" }, maxTurns: 1 }],
    policies: ["policy"],
    frozen: [],
    loadTasks: async () => tasks,
    registry,
    baseUrl: "http://127.0.0.1:1/v1",
    batchTasks,
    groupSize,
    infraRetries: 2,
    seed: 0,
    lookahead: 2,
    leaseMs: 60_000,
  });
  const app = Fastify({ logger: false });
  await app.register(swarmPlugin, { scheduler });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const url = `ws://127.0.0.1:${(app.server.address() as AddressInfo).port}/swarm`;
  const sims = Array.from({ length: clients }, (_, i) => new SimClient(url, `sim-${i}`, concurrency));
  await Promise.all(sims.map((s) => s.ready));
  const ended = () => sims.reduce((a, s) => a + s.ended, 0);

  // Throughput: every client ends each episode the moment it is assigned.
  scheduler.start();
  await until(() => ended() >= (quick ? 2_000 : 5_000), 60_000);
  const total = quick ? 10_000 : 50_000;
  const t0 = performance.now();
  const e0 = ended();
  await until(() => ended() - e0 >= total, 300_000);
  const seconds = (performance.now() - t0) / 1000;
  const episodes = ended() - e0;
  log(`${label}: ${fmt(episodes / seconds)} episodes/s over ${episodes} episodes`);

  // Memory: rounds of 1,000 episodes held in flight across the 100 clients, then released.
  for (const s of sims) s.hold = true;
  const heaps: number[] = [];
  const inFlight: number[] = [];
  for (let r = 0; r < (quick ? 4 : 10); r++) {
    await until(() => scheduler.stats().inFlight >= clients * concurrency, 60_000);
    gc();
    heaps.push(mib(process.memoryUsage().heapUsed));
    inFlight.push(scheduler.stats().inFlight);
    for (const s of sims) s.release();
  }
  for (const s of sims) s.hold = false;
  const stats = scheduler.stats();
  for (const s of sims) s.close();
  await scheduler.close();
  await app.close();
  return { episodes, seconds, rate: episodes / seconds, batches: stats.batchesCompleted, stale: stats.staleResults, heaps, inFlight };
}

export const bench: Bench = {
  name: "scheduler",
  async run({ quick, log }) {
    const double = await measure(new CountingRegistry(), quick, log, "bench-double store");
    const db = openRunDb(":memory:");
    const store = createEpisodeStore({ db, policies: ["policy"], reclaimTimer: false, keySecret: "bench" });
    const real = await measure(registryFromEpisodeStore(store), quick, log, "server EpisodeStore");
    store.close();
    db.close();

    const growth = (m: Measured) => (m.heaps.length > 2 ? m.heaps.at(-1)! - m.heaps[1]! : 0);
    return [
      {
        title: "Scheduling throughput (100 clients x 10 on loopback WebSocket, group 8, batch 125 tasks)",
        columns: ["episode store", "episodes", "seconds", "episodes/s", "batches completed", "stale results"],
        rows: [
          ["bench double (in memory)", double.episodes, fmt(double.seconds), fmt(double.rate), double.batches, double.stale],
          ["server EpisodeStore (sqlite :memory:, signed keys)", real.episodes, fmt(real.seconds), fmt(real.rate), real.batches, real.stale],
        ],
        notes: [
          `Target >= 1,000 episodes/s: ${Math.min(double.rate, real.rate) >= 1000 ? "met" : "NOT met"} (${fmt(double.rate)} and ${fmt(real.rate)}).`,
          "Each episode: plan, register, claim (keys), assign frame, end frame, end in the store, batch report.",
          "The simulated clients run in the same process as the scheduler, so the rate includes their JSON work too.",
        ],
      },
      {
        title: "Process heap with 1,000 episodes in flight (after GC), round by round",
        columns: ["round", "in flight", "heap MiB (bench double)", "heap MiB (server EpisodeStore)"],
        rows: double.heaps.map((h, i) => [i + 1, double.inFlight[i]!, fmt(h), fmt(real.heaps[i] ?? Number.NaN)]),
        notes: [
          `Heap growth from round 2 to the last: ${fmt(growth(double))} MiB (bench double), ${fmt(growth(real))} MiB (server store): ${Math.abs(growth(double)) < 5 && Math.abs(growth(real)) < 5 ? "flat" : "NOT flat"}.`,
          "The heap is the whole process (100 simulated clients' sockets included); finished batches are dropped after their report.",
        ],
      },
    ];
  },
};
