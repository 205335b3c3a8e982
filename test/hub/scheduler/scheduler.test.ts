import { afterEach, describe, expect, it } from "vitest";
import { type BatchReport, type GroupScorer, Scheduler, type SchedulerOptions } from "../../../hub/scheduler/index.ts";
import { ScriptedRegistry } from "../../e2e/fixtures/scripted-server.ts";
import { SimClient, settle, until } from "./fixtures/sim-client.ts";
import { createTestScheduler } from "./fixtures/test-scheduler.ts";

const solo = [{ id: "solver", role: "solver" }];
const tasksOf = (env: string, split: string, n: number) => Array.from({ length: n }, (_, i) => ({ id: `${env}-${split}-${i}`, split, data: i }));

const open: Scheduler[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function make(extra: Partial<SchedulerOptions> = {}) {
  const registry = new ScriptedRegistry();
  const { scheduler, events } = await createTestScheduler({
    environments: [
      { name: "a", version: "1.0.0", weight: 1, split: "train", agents: solo, roles: { solver: "policy" }, maxTurns: 4 },
      { name: "b", version: "1.0.0", weight: 1, split: "train", agents: solo, roles: { solver: "policy" }, maxTurns: 4 },
    ],
    loadTasks: async (env, split) => tasksOf(env, split, split === "train" ? 5 : 3),
    registry,
    batchTasks: 2,
    leaseMs: 200,
    ...extra,
  });
  open.push(scheduler);
  const batches = () => events.flatMap((e) => (e.type === "batch" ? [e.batch] : []));
  return { registry, scheduler, events, batches };
}

const both = [
  { name: "a", version: "1.0.0" },
  { name: "b", version: "1.0.0" },
];

/** Ends every open assignment of the given clients until `done` holds. */
async function drive(clients: SimClient[], done: () => boolean): Promise<void> {
  await until(() => {
    for (const c of clients) for (const a of c.open()) c.end(a);
    return done();
  });
}

describe("Scheduler", () => {
  it("fills each batch with the quotas, one result per group member, and registers a key per agent", async () => {
    const { scheduler, registry, batches } = await make({ maxBatches: 2 });
    scheduler.start();
    const c = new SimClient(scheduler, "c", both, 8);
    c.hello();
    await drive([c], () => batches().length === 2);
    for (const b of batches()) {
      expect(b.quotas).toEqual({ a: 1, b: 1 });
      expect(b.filled).toEqual({ a: 1, b: 1 });
      for (const g of b.groups) expect(g.episodes).toHaveLength(2);
    }
    const first = c.assignments()[0]!;
    expect(first.agents.solver).toMatchObject({ baseUrl: "http://127.0.0.1:1/v1", model: "policy", role: "solver" });
    expect(first.agents.solver!.apiKey).toMatch(/^sk-test-/);
    expect(registry.samples).toHaveLength(8);
  });

  it("routes only to clients with the exact version, spreading by free capacity", async () => {
    const { scheduler } = await make({ batchTasks: 3 });
    scheduler.start();
    const wrong = new SimClient(scheduler, "wrong", [{ name: "a", version: "2.0.0" }, { name: "b", version: "1.0.1" }], 8);
    const big = new SimClient(scheduler, "big", both, 3);
    const small = new SimClient(scheduler, "small", both, 1);
    wrong.hello();
    big.hello();
    small.hello();
    await until(() => big.open().length + small.open().length === 4);
    expect(wrong.assignments()).toHaveLength(0);
    expect(big.open()).toHaveLength(3);
    expect(small.open()).toHaveLength(1);
  });

  it("re-queues a silent client's episodes under new ids and ignores its late results", async () => {
    const { scheduler, registry, batches, events } = await make({ maxBatches: 1 });
    scheduler.start();
    const dead = new SimClient(scheduler, "dead", both, 8);
    dead.hello();
    await until(() => dead.open().length === 4);
    const lost = dead.open();
    const alive = new SimClient(scheduler, "alive", both, 8);
    alive.hello();
    // `alive` heart-beats (without finishing) while `dead` stays silent past its lease.
    await until(() => {
      alive.heartbeat();
      return alive.open().length === 4;
    });
    const rerun = alive.open();
    expect(new Set(rerun.map((a) => a.episodeId.replace(/-t\d+$/, "")))).toEqual(new Set(lost.map((a) => a.episodeId.replace(/-t\d+$/, ""))));
    expect(rerun.every((a) => a.attempt === 1)).toBe(true);
    for (const a of lost) dead.end(a);
    expect(scheduler.stats().staleResults).toBe(4);
    await drive([alive], () => batches().length === 1);
    expect(registry.samples).toHaveLength(4);
    expect(new Set(registry.samples.map((s) => s.episodeId)).size).toBe(4);
    expect(registry.aborted.filter((a) => a.reason.kind === "client-lost")).toHaveLength(4);
    expect(events.some((e) => e.type === "client" && e.clientId === "dead" && e.status === "lost")).toBe(true);
  });

  it("re-queues a disconnected client's episodes at once (not after the lease); its reconnect is told to cancel them", async () => {
    const { scheduler, batches, registry } = await make({ maxBatches: 1, leaseMs: 60_000 });
    scheduler.start();
    const c = new SimClient(scheduler, "c", both, 8);
    c.hello();
    await until(() => c.open().length === 4);
    const running = c.open();
    c.disconnect();
    expect(registry.aborted.filter((a) => a.reason.kind === "client-lost")).toHaveLength(4);
    expect(scheduler.stats()).toMatchObject({ inFlight: 0, lost: 4, queued: 4 });
    const again = new SimClient(scheduler, "c", both, 8);
    again.hello(running.map((a) => a.episodeId));
    const welcome = again.inbox[0]!;
    expect(welcome.type === "welcome" && welcome.resumed).toEqual([]);
    expect(again.inbox.filter((m) => m.type === "cancel").map((m) => m.type === "cancel" && m.episodeId).sort()).toEqual(running.map((a) => a.episodeId).sort());
    await drive([again], () => batches().length === 1);
    expect(batches()[0]!.groups.flatMap((g) => g.episodes).every((e) => e.attempt === 1)).toBe(true);
  });

  it("registers nothing while the store's claims are paused or canSchedule says no", async () => {
    let open = false;
    const { scheduler, registry } = await make({ maxBatches: 1, canSchedule: () => open });
    scheduler.start();
    const c = new SimClient(scheduler, "c", both, 8);
    c.hello();
    await settle();
    expect(registry.episodes.size).toBe(0);
    open = true;
    registry.paused = true;
    c.heartbeat();
    await settle();
    expect(registry.episodes.size).toBe(0);
    registry.resumeClaims();
    await until(() => c.open().length === 4);
    expect(registry.aborted).toHaveLength(0);
  });

  it("retries infra failures up to infraRetries, then fails the group, counts it and replaces it", async () => {
    const { scheduler, batches, registry, events } = await make({ maxBatches: 1, infraRetries: 1 });
    scheduler.start();
    const c = new SimClient(scheduler, "c", both, 8);
    c.hello();
    let crashes = 0;
    await until(() => {
      for (const a of c.open()) {
        // The first group of environment "a" crashes on its member 0, every try.
        if (a.env.name === "a" && a.episodeId.startsWith("b0-g0-m0")) {
          crashes += 1;
          c.abort(a);
        } else c.end(a);
      }
      return batches().length === 1;
    });
    const b: BatchReport = batches()[0]!;
    expect(crashes).toBe(2);
    expect(b.failedGroups).toBe(1);
    expect(b.groups.find((g) => g.groupId === "0:0")).toMatchObject({ status: "failed", env: "a" });
    expect(b.filled).toEqual({ a: 1, b: 1 });
    expect(scheduler.stats().failedGroups).toBe(1);
    expect(registry.samples.some((s) => s.groupId === "0:0")).toBe(true); // member 1 ended before; the batch masks the group out
    // The training side hears of the failure at once, with the members that had ended, to drop them.
    const failed = events.filter((e) => e.type === "group-failed");
    expect(failed).toMatchObject([{ env: "a", groupId: "0:0", failures: [{ kind: "crash" }, { kind: "crash" }] }]);
    const ended = registry.samples.filter((s) => s.groupId === "0:0").map((s) => s.episodeId);
    expect(failed[0]!.type === "group-failed" && failed[0]!.episodeIds).toEqual(ended);
  });

  // Regression (issue 18, item 10): every episode the store gave up was reported as a `timeout`, and the
  // siblings of a failed group as `client-lost`.
  it("names the real cause when the server gives an episode up or a group fails", async () => {
    const { scheduler, registry } = await make({ maxBatches: 1, infraRetries: 3, leaseMs: 60_000 });
    scheduler.start();
    const c = new SimClient(scheduler, "c", both, 8);
    c.hello();
    await until(() => c.open().length === 4);
    const [first, second, third] = c.open();
    registry.giveUp(first!.episodeId, "reclaimed");
    registry.giveUp(second!.episodeId, "abandoned");
    c.disconnect();
    registry.giveUp(third!.episodeId, "reclaimed");
    const kindOf = (id: string) => registry.aborted.find((a) => a.episodeId === id)?.reason.kind;
    await until(() => registry.aborted.length >= 3);
    expect([kindOf(first!.episodeId), kindOf(second!.episodeId), kindOf(third!.episodeId)]).toEqual(["reclaimed", "abandoned", "client-lost"]);
  });

  it("cancels the running siblings of a failed group as group-failed", async () => {
    const { scheduler, registry } = await make({ maxBatches: 1, infraRetries: 0 });
    scheduler.start();
    const c = new SimClient(scheduler, "c", both, 8);
    c.hello();
    await until(() => c.open().length === 4);
    const victim = c.open().find((a) => a.episodeId.startsWith("b0-g0-m0"))!;
    const sibling = c.open().find((a) => a.episodeId.startsWith("b0-g0-m1"))!;
    c.abort(victim);
    await until(() => registry.aborted.some((a) => a.episodeId === sibling.episodeId));
    expect(registry.aborted.find((a) => a.episodeId === sibling.episodeId)?.reason.kind).toBe("group-failed");
  });

  it("runs evaluation beside training, never in a batch, and reports per environment", async () => {
    const { scheduler, batches, registry } = await make({ maxBatches: 1 });
    scheduler.start();
    const c = new SimClient(scheduler, "c", both, 8);
    c.hello();
    const report = scheduler.evaluate({ split: "test", tasks: 2 });
    await until(() => {
      for (const a of c.open()) c.end(a, { solver: a.purpose === "eval" ? 0.5 : 1 });
      return batches().length === 1;
    });
    const r = await report;
    expect(Object.keys(r.perEnv)).toEqual(["a", "b"]);
    expect(r.perEnv.a).toMatchObject({ episodes: 2, failed: 0, meanReward: 0.5 });
    const trainIds = batches()[0]!.groups.flatMap((g) => g.episodes.map((e) => e.episodeId));
    expect(trainIds.some((id) => id.startsWith("v"))).toBe(false);
    expect([...registry.episodes.values()].filter((e) => e.reg.purpose === "eval")).toHaveLength(4);
  });

  it("evaluates every K batches when configured", async () => {
    const { scheduler, events } = await make({ maxBatches: 2, eval: { every: 2, split: "test", tasks: 1 } });
    scheduler.start();
    const c = new SimClient(scheduler, "c", both, 8);
    c.hello();
    await drive([c], () => events.some((e) => e.type === "eval"));
    const evalEvent = events.find((e) => e.type === "eval")!;
    expect(evalEvent.type === "eval" && evalEvent.report.step).toBe(2);
  });

  it("holds claims while the store pauses them and resumes after", async () => {
    const { scheduler, registry } = await make({ maxBatches: 1 });
    registry.paused = true;
    scheduler.start();
    const c = new SimClient(scheduler, "c", both, 8);
    c.hello();
    await settle();
    await settle();
    expect(c.assignments()).toHaveLength(0);
    registry.resumeClaims();
    await until(() => c.open().length === 4);
  });

  // Issue 25: a judge or reward-model failure is an infrastructure failure of the episode (retried, never reward 0).
  it("a group scorer that fails retries the group's held episodes as reward-model; none is ended with a reward of its own", async () => {
    const calls: number[] = [];
    const scorer: GroupScorer = {
      async score({ episodes }) {
        calls.push(episodes.length);
        if (calls.length === 1) throw new Error("judge endpoint down");
        return episodes.map((_, i) => ({ rewards: { solver: i === 0 ? 0.75 : 0.25 }, info: { rewardParts: { solver: { values: { env: 0, rank: i === 0 ? 0.75 : 0.25 } } } } }));
      },
    };
    const { scheduler, batches, registry } = await make({ maxBatches: 1, infraRetries: 1, groupScorer: (env) => (env === "a" ? scorer : undefined) });
    scheduler.start();
    const c = new SimClient(scheduler, "c", both, 8);
    c.hello();
    await drive([c], () => batches().length === 1);
    expect(calls).toEqual([2, 2]);
    const judged = registry.aborted.filter((a) => a.reason.kind === "reward-model");
    expect(judged).toHaveLength(2);
    expect(judged.every((a) => a.reason.message.includes("judge endpoint down"))).toBe(true);
    expect(batches()[0]!.failedGroups).toBe(0);
    // Env "a" trains only on the retried group's judged rewards; the failed try left nothing in the pool.
    const fromA = registry.samples.filter((s) => s.env === "a");
    expect(fromA.map((s) => s.reward).sort()).toEqual([0.25, 0.75]);
    expect(fromA.some((s) => judged.some((j) => j.episodeId === s.episodeId))).toBe(false);
    expect(registry.samples.filter((s) => s.env === "b").map((s) => s.reward)).toEqual([1, 1]);
  });

  it("a group scorer still judging when the scheduler closes sees its signal abort (a judge waiting to retry stops)", async () => {
    let signal: AbortSignal | null = null;
    const scorer: GroupScorer = {
      score(input) {
        signal = input.signal;
        // a judge that never answers until it is told to stop
        return new Promise((_, reject) => input.signal.addEventListener("abort", () => reject(new Error("judge stopped")), { once: true }));
      },
    };
    const { scheduler } = await make({ maxBatches: 1, groupScorer: (env) => (env === "a" ? scorer : undefined) });
    scheduler.start();
    const c = new SimClient(scheduler, "c", both, 8);
    c.hello();
    await until(() => {
      for (const a of c.open()) c.end(a);
      return signal !== null;
    });
    expect(signal!.aborted).toBe(false);
    await scheduler.close();
    expect(signal!.aborted).toBe(true);
  });

  it("serialises its state and a resumed scheduler plans the same unfinished batch", async () => {
    const first = await make({ maxBatches: 3 });
    first.scheduler.start();
    const c = new SimClient(first.scheduler, "c", both, 8);
    c.hello();
    await until(() => {
      for (const a of c.open()) if (a.episodeId.startsWith("b0-")) c.end(a);
      return first.batches().length === 1 && c.open().length === 4;
    });
    const planned = c.open().map((a) => a.task.id).sort();
    const state = JSON.parse(JSON.stringify(first.scheduler.snapshot()));
    expect(state.nextBatch).toBe(1);
    const second = await make({ maxBatches: 3, state });
    second.scheduler.start();
    const d = new SimClient(second.scheduler, "d", both, 8);
    d.hello();
    await until(() => d.open().length === 4);
    expect(d.open().map((a) => a.task.id).sort()).toEqual(planned);
    expect(d.open()[0]!.episodeId.startsWith("b1-")).toBe(true);
  });

  it("a resumed scheduler re-plans an unfinished batch at the step it was mixed at, whatever mixStep says now", async () => {
    const schedule = [
      { name: "a", version: "1.0.0", weight: { kind: "linear", start: 1, end: 0, steps: 2 }, split: "train", agents: solo, roles: { solver: "policy" }, maxTurns: 4 },
      { name: "b", version: "1.0.0", weight: 1, split: "train", agents: solo, roles: { solver: "policy" }, maxTurns: 4 },
    ] as const;
    const first = await make({ maxBatches: 1, environments: [...schedule], mixStep: () => 0 });
    first.scheduler.start();
    const c = new SimClient(first.scheduler, "c", both, 8);
    c.hello();
    // a's group completes; b's is still running when the run stops.
    await until(() => {
      for (const x of c.open()) if (x.env.name === "a") c.end(x);
      return c.assignments().filter((x) => x.env.name === "a").length === 2 && c.open().length === 2;
    });
    const state = JSON.parse(JSON.stringify(first.scheduler.snapshot()));
    expect(state).toMatchObject({ nextBatch: 0, mixSteps: [0], doneGroups: ["0:0"] });
    // By now the run's step says a's weight is 0: the re-planned batch still holds a's completed group.
    const second = await make({ maxBatches: 1, environments: [...schedule], mixStep: () => 5, state });
    second.scheduler.start();
    const d = new SimClient(second.scheduler, "d", both, 8);
    d.hello();
    await drive([d], () => second.batches().length === 1);
    expect(second.batches()[0]).toMatchObject({ quotas: { a: 1, b: 1 }, filled: { a: 1, b: 1 } });
    expect(d.assignments().map((x) => x.env.name)).toEqual(["b", "b"]);
  });

  it("reports an environment no connected client can run, once, with the fix, and again when a client for it connects", async () => {
    const { scheduler, events, batches } = await make({ maxBatches: 2, waitingReportMs: 100 });
    const waitingFor = (env: string) => events.filter((e) => e.type === "env-waiting" && e.env === env);
    scheduler.start();
    // Before any client connected the run says it waits for clients: no environment is singled out.
    await new Promise((r) => setTimeout(r, 250));
    expect(events.filter((e) => e.type === "env-waiting")).toHaveLength(0);
    const onlyA = new SimClient(scheduler, "only-a", [{ name: "a", version: "1.0.0" }], 8);
    onlyA.hello();
    await until(() => {
      for (const x of onlyA.open()) onlyA.end(x);
      return waitingFor("b").length > 0;
    });
    const [report] = waitingFor("b");
    expect(report).toMatchObject({ env: "b", queued: 2 });
    expect(report!.type === "env-waiting" && report.message).toMatch(/no connected client can run b@1\.0\.0 .*2 of its episodes wait.*training waits.*agentjet client --envs b/);
    expect(scheduler.waiting()).toMatchObject([{ env: "b", queued: 2 }]);
    expect(waitingFor("a")).toHaveLength(0);
    // Only a's share of the planned batches ran: none finished.
    expect(batches()).toHaveLength(0);
    expect(onlyA.assignments().every((x) => x.env.name === "a")).toBe(true);

    // A client for b joins late: it is said, and the batches finish with their quotas.
    const onlyB = new SimClient(scheduler, "only-b", [{ name: "b", version: "1.0.0" }], 8);
    onlyB.hello();
    expect(events.filter((e) => e.type === "env-served")).toMatchObject([{ env: "b", clients: ["only-b"] }]);
    expect(scheduler.waiting()).toEqual([]);
    await drive([onlyA, onlyB], () => batches().length === 2);
    for (const b of batches()) expect(b.filled).toEqual({ a: 1, b: 1 });
    expect(onlyB.assignments().every((x) => x.env.name === "b")).toBe(true);
    expect(waitingFor("b")).toHaveLength(1);
  });

  it("reports the environment whose only client disconnected, naming that client", async () => {
    const { scheduler, events } = await make({ maxBatches: 2, waitingReportMs: 100, leaseMs: 60_000 });
    scheduler.start();
    const onlyA = new SimClient(scheduler, "only-a", [{ name: "a", version: "1.0.0" }], 8);
    const onlyB = new SimClient(scheduler, "only-b", [{ name: "b", version: "1.0.0" }], 8);
    onlyA.hello();
    onlyB.hello();
    await until(() => onlyB.open().length === 2);
    onlyB.disconnect();
    await until(() => {
      onlyA.heartbeat();
      return events.some((e) => e.type === "env-waiting");
    }, 10_000);
    const report = events.find((e) => e.type === "env-waiting");
    expect(report).toMatchObject({ env: "b", queued: 2 });
    expect(report?.type === "env-waiting" && report.message).toMatch(/no connected client can run b@1\.0\.0 for \d+ s \('only-b', which could, is gone\)/);
  });
  // Regression: every weight 0 planned empty batches forever, in one synchronous loop (a hang at 100% CPU).
  it("refuses weights that are all 0 at some step, at creation", async () => {
    const zero = (weight: SchedulerOptions["environments"][number]["weight"]) => ({ name: "a", version: "1.0.0", weight, split: "train", agents: solo, roles: { solver: "policy" }, maxTurns: 4 });
    const create = (weights: Array<SchedulerOptions["environments"][number]["weight"]>) =>
      createTestScheduler({ environments: weights.map((w, i) => ({ ...zero(w), name: `e${i}` })), loadTasks: async (env, split) => tasksOf(env, split, 3), registry: new ScriptedRegistry(), batchTasks: 2 });
    await expect(create([0, 0])).rejects.toMatchObject({ code: "AJ_ERR_SCHEDULER_NO_WEIGHT", message: expect.stringContaining("at step 0") });
    await expect(create([{ kind: "linear", start: 1, end: 0, steps: 4 }, 0])).rejects.toMatchObject({ message: expect.stringContaining("from step 4 on") });
    const { scheduler } = await create([0, 1]);
    open.push(scheduler);
  });
  // Regression: schedules moved with the batch index, so a run whose filtering dropped whole batches
  // (an untrained policy, most groups all 0) reached a schedule's end share steps too early.
  it("reads a schedule at the step mixStep gives (the run's optimizer step), not at the batch index", async () => {
    let trained = 0;
    const seen: number[] = [];
    const { scheduler, batches } = await make({
      maxBatches: 4,
      environments: [
        { name: "a", version: "1.0.0", weight: { kind: "linear", start: 1, end: 0, steps: 2 }, split: "train", agents: solo, roles: { solver: "policy" }, maxTurns: 4 },
        { name: "b", version: "1.0.0", weight: 1, split: "train", agents: solo, roles: { solver: "policy" }, maxTurns: 4 },
      ],
      mixStep: (ahead) => {
        seen.push(ahead);
        return trained + ahead;
      },
    });
    scheduler.start();
    const c = new SimClient(scheduler, "c", both, 8);
    c.hello();
    /** Ends the episodes of batches below `b` until `b` batches finished. */
    const playTo = (b: number) =>
      until(() => {
        for (const x of c.open()) if (Number(/^b(\d+)-/.exec(x.episodeId)![1]) < b) c.end(x);
        return batches().length === b;
      });
    // The first batches train nothing (filtered): the step stays 0, and batches 0-2 get its weights (the
    // batch index moved on to 2, where a's schedule has reached 0).
    await playTo(2);
    trained = 2;
    await playTo(4);
    expect(batches().map((b) => b.quotas)).toEqual([
      { a: 1, b: 1 },
      { a: 1, b: 1 },
      { a: 1, b: 1 },
      { a: 0, b: 2 },
    ]);
    expect(seen.every((n) => n === 0)).toBe(true);
  });
});
