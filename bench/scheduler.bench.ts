import type { AddressInfo } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import Fastify from "fastify";
import WebSocket from "ws";
import type { ClaimOutcome, EpisodeRegistration, EpisodeRegistry } from "../hub/scheduler/index.ts";
import { Scheduler } from "../hub/scheduler/index.ts";
import { swarmPlugin } from "../hub/swarm/index.ts";
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

export const bench: Bench = {
  name: "scheduler",
  async run({ quick, log }) {
    const clients = 100;
    const concurrency = 10;
    const groupSize = 8;
    const batchTasks = (clients * concurrency) / groupSize;
    const registry = new CountingRegistry();
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
    const warm = quick ? 2_000 : 5_000;
    await until(() => ended() >= warm, 60_000);
    const total = quick ? 10_000 : 50_000;
    const t0 = performance.now();
    const e0 = ended();
    await until(() => ended() - e0 >= total, 300_000);
    const seconds = (performance.now() - t0) / 1000;
    const rate = (ended() - e0) / seconds;
    log(`throughput: ${fmt(rate)} episodes/s over ${ended() - e0} episodes`);

    // Memory: rounds of 1,000 episodes held in flight across the 100 clients, then released.
    for (const s of sims) s.hold = true;
    const rounds = quick ? 4 : 10;
    const heaps: number[] = [];
    const inFlight: number[] = [];
    for (let r = 0; r < rounds; r++) {
      await until(() => scheduler.stats().inFlight >= clients * concurrency, 60_000);
      gc();
      heaps.push(mib(process.memoryUsage().heapUsed));
      inFlight.push(scheduler.stats().inFlight);
      for (const s of sims) s.release();
    }
    for (const s of sims) s.hold = false;
    for (const s of sims) s.release();
    const stats = scheduler.stats();
    for (const s of sims) s.close();
    await scheduler.close();
    await app.close();

    const growth = heaps.length > 2 ? heaps.at(-1)! - heaps[1]! : 0;
    const rows: Array<Array<string | number>> = heaps.map((h, i) => [i + 1, inFlight[i]!, fmt(h)]);
    return [
      {
        title: `Scheduling throughput (${clients} clients x ${concurrency} on loopback WebSocket, group ${groupSize}, batch ${batchTasks} tasks)`,
        columns: ["episodes", "seconds", "episodes/s", "batches completed", "stale results"],
        rows: [[ended() - e0, fmt(seconds), fmt(rate), stats.batchesCompleted, stats.staleResults]],
        notes: [
          `Target >= 1,000 episodes/s: ${rate >= 1000 ? "met" : "NOT met"} (${fmt(rate)}).`,
          "Each episode: plan, register, claim, assign frame, end frame, end in the store (a bench double), batch report.",
          "The simulated clients run in the same process as the scheduler, so the rate includes their JSON work too.",
        ],
      },
      {
        title: "Scheduler heap with 1,000 episodes in flight (after GC), round by round",
        columns: ["round", "in flight", "heap used (MiB)"],
        rows,
        notes: [
          `Heap growth from round 2 to round ${rounds}: ${fmt(growth)} MiB (${Math.abs(growth) < 5 ? "flat" : "NOT flat"}).`,
          "The heap includes the 100 simulated clients' sockets; finished batches are dropped after their report.",
        ],
      },
    ];
  },
};
