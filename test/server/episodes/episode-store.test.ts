import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openRunDb, type RunDb } from "../../../server/db/run-db.ts";
import { createEpisodeStore, type EpisodeStore } from "../../../server/episodes/episode-store.ts";
import type { Episode } from "../../../server/episodes/episode.ts";
import { refusalError } from "../../../server/episodes/errors.ts";
import type { TrackedCall } from "../../../server/tracker/tracker.ts";
import { trackedCall } from "../helpers/tracked-call.ts";

let clock = 1_000_000;
const opened: Array<{ store: EpisodeStore; db: RunDb }> = [];

function open(db: RunDb = openRunDb(":memory:")): EpisodeStore {
  const store = createEpisodeStore({
    rewardRanges: new Map([["smoke", { min: 0, max: 1 }]]),
    db,
    keySecret: "s",
    idleTimeoutS: 10,
    policies: ["main"],
    frozen: ["opponent"],
    now: () => clock,
    reclaimTimer: false,
  });
  opened.push({ store, db });
  return store;
}

afterEach(() => {
  for (const { store } of opened.splice(0)) store.close();
});

const agents = { solver: { kind: "policy" as const, target: "main" }, rival: { kind: "frozen" as const, target: "opponent" } };

function fakeCall(episodeId: string, agentId: string, seq: number, trainable = true): TrackedCall {
  return trackedCall({ callId: `${episodeId}-${agentId}-${seq}`, episodeId, agentId, policy: trainable ? "main" : "opponent", trainable, seq, startedAt: clock });
}

function claimed(store: EpisodeStore, id?: string): { episode: Episode; keys: Record<string, string> } {
  const r = store.claim(id === undefined ? {} : { episodeId: id });
  if (r.kind !== "claimed") throw new Error(`expected a claim, got ${r.kind}`);
  return r;
}

describe("episode store", () => {
  it("registered -> claimed -> ended, with a key per agent and the ended event", () => {
    const store = open();
    const events: string[] = [];
    let endedCalls: unknown[] = [];
    store.on("registered", () => events.push("registered"));
    store.on("claimed", () => events.push("claimed"));
    store.on("ended", (_e, calls) => {
      events.push("ended");
      endedCalls = calls;
    });
    expect(store.register({ episodeId: "e1", taskId: "t1", env: "smoke", agents })).toMatchObject({ kind: "ok", episode: { state: "registered" } });
    const { episode, keys } = claimed(store);
    expect(episode).toMatchObject({ episodeId: "e1", state: "claimed", attempt: 1 });
    expect(Object.keys(keys).sort()).toEqual(["rival", "solver"]);
    expect(store.inFlight()).toEqual(["e1"]);
    const auth = store.authorize(keys.solver!);
    expect(auth).toMatchObject({ kind: "ok", agentId: "solver", binding: { kind: "policy", target: "main" } });
    store.tracker.record(fakeCall("e1", "solver", 0));
    store.tracker.record(fakeCall("e1", "rival", 0, false));
    const ended = store.end("e1", { rewards: { solver: 1 }, metadata: { won: true } });
    expect(ended).toMatchObject({ kind: "ok", episode: { state: "ended", rewards: { solver: 1 }, metadata: { won: true } } });
    expect(events).toEqual(["registered", "claimed", "ended"]);
    expect(endedCalls).toHaveLength(1);
    expect(endedCalls[0]).not.toHaveProperty("trainable");
    expect(store.inFlight()).toEqual([]);
    expect(store.authorize(keys.solver!).kind).toBe("conflict");
    expect(store.get("e1")?.state).toBe("ended");
  });

  // Regression (issue 18, items 3 and 4): ends with a reward of 1e6 for a [0, 1] environment, or with
  // no reward for a trained agent, were stored as ended and went to the pool.
  it("refuses rewards outside the declared range, not finite, or missing for a trained agent: aborted as protocol", () => {
    const store = open();
    const aborted: Episode[] = [];
    const ended: Episode[] = [];
    store.on("aborted", (e) => aborted.push(e));
    store.on("ended", (e) => ended.push(e));
    const cases: Array<[string, Record<string, number>, RegExp]> = [
      ["big", { solver: 1e6 }, /outside smoke's declared range \[0, 1\]/],
      ["nan", { solver: Number.NaN }, /not a finite number/],
      ["none", {}, /no reward for 'solver'/],
      ["frozen-only", { rival: 0.5 }, /no reward for 'solver'/],
      ["rival-out", { solver: 1, rival: -3 }, /-3 for 'rival' is outside/],
    ];
    for (const [id, rewards, why] of cases) {
      store.register({ episodeId: id, taskId: "t", env: "smoke", agents });
      claimed(store, id);
      store.tracker.record(fakeCall(id, "solver", 0));
      const refused = store.end(id, { rewards });
      expect(refused).toMatchObject({ kind: "rewards-refused", episodeId: id, reason: expect.stringMatching(why), episode: { state: "aborted" } });
      expect(store.get(id)).toMatchObject({ state: "aborted", abortReason: { kind: "protocol" }, rewards: null });
    }
    expect(aborted.map((e) => e.episodeId)).toEqual(cases.map(([id]) => id));
    expect(ended).toEqual([]);
    // An environment the server has no range for is checked for finiteness and trained agents only.
    store.register({ episodeId: "other", taskId: "t", env: "elsewhere", agents });
    claimed(store, "other");
    expect(store.end("other", { rewards: { solver: 7 } })).toMatchObject({ kind: "ok", episode: { state: "ended" } });
  });

  it("answers transitions the state machine does not have with values, and writes nothing for them", () => {
    const store = open();
    store.register({ episodeId: "e1", taskId: "t", env: "smoke", agents });
    expect(store.end("e1", { rewards: {} })).toEqual({ kind: "wrong-state", episodeId: "e1", state: "registered", action: "end" });
    expect(store.heartbeat("e1")).toEqual({ kind: "wrong-state", episodeId: "e1", state: "registered", action: "heartbeat" });
    claimed(store, "e1");
    expect(store.claim({ episodeId: "e1" })).toEqual({ kind: "wrong-state", episodeId: "e1", state: "claimed", action: "claim" });
    expect(store.abort("e1", { kind: "sandbox_crash", message: "boom" }).kind).toBe("ok");
    // A finished episode is no longer live: every transition of it answers not-found.
    expect(store.end("e1", { rewards: {} })).toEqual({ kind: "not-found", episodeId: "e1" });
    expect(store.abort("e1", { kind: "sandbox_crash", message: "again" })).toEqual({ kind: "not-found", episodeId: "e1" });
    expect(store.claim({ episodeId: "nope" })).toEqual({ kind: "not-found", episodeId: "nope" });
    expect(store.register({ episodeId: "e1", taskId: "t", env: "smoke", agents })).toEqual({ kind: "exists", episodeId: "e1" });
    expect(store.register({ taskId: "t", env: "smoke", agents: { a: { kind: "policy", target: "nope" } } })).toEqual({
      kind: "unknown-binding",
      agentId: "a",
      target: "nope",
      as: "policy",
      otherKind: false,
    });
    expect(store.get("e1")).toMatchObject({ state: "aborted", abortReason: { kind: "sandbox_crash", message: "boom" } });
  });

  it("says which kind a binding named and that its target is a model of the other kind", () => {
    const store = createEpisodeStore({ db: openRunDb(":memory:"), policies: ["main"], frozen: ["peer"] });
    const asFrozen = store.register({ taskId: "t", env: "smoke", agents: { p: { kind: "frozen", target: "main" } } });
    expect(asFrozen).toEqual({ kind: "unknown-binding", agentId: "p", target: "main", as: "frozen", otherKind: true });
    expect(refusalError(asFrozen as Parameters<typeof refusalError>[0]).message).toBe(
      `agent 'p' is bound as a frozen model (kind "frozen") to 'main', which is a policy: bind it with kind "policy"`,
    );
    const asPolicy = store.register({ taskId: "t", env: "smoke", agents: { q: { kind: "policy", target: "peer" } } });
    expect(refusalError(asPolicy as Parameters<typeof refusalError>[0]).message).toBe(
      `agent 'q' is bound as a policy (kind "policy") to 'peer', which is a frozen model: bind it with kind "frozen"`,
    );
    const unknown = store.register({ taskId: "t", env: "smoke", agents: { r: { kind: "frozen", target: "nope" } } });
    expect(refusalError(unknown as Parameters<typeof refusalError>[0]).message).toBe(
      `agent 'r' is bound as a frozen model (kind "frozen") to 'nope', which is no frozen model of this server`,
    );
  });

  it("gives each refusal its coded error for callers to whom it is a failure", () => {
    const codes = [
      refusalError({ kind: "not-found", episodeId: "e" }),
      refusalError({ kind: "wrong-state", episodeId: "e", state: "registered", action: "end" }),
      refusalError({ kind: "exists", episodeId: "e" }),
      refusalError({ kind: "unknown-binding", agentId: "a", target: "t" }),
    ].map((e) => [e.code, e.httpStatus]);
    expect(codes).toEqual([
      ["AJ_ERR_EPISODE_NOT_FOUND", 404],
      ["AJ_ERR_EPISODE_STATE", 409],
      ["AJ_ERR_EPISODE_EXISTS", 409],
      ["AJ_ERR_EPISODE_BINDING", 400],
    ]);
  });

  it("on a file, a transition's row goes to the writer thread with the calls: read from memory until it is committed, never written on the event loop", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aj-store-rows-"));
    try {
      const db = openRunDb(join(dir, "run.db"));
      const store = open(db);
      const reader = openRunDb(join(dir, "run.db"));
      const stateInDb = (id: string) => (reader.prepare("SELECT state FROM episodes WHERE episode_id = ?").get(id) as { state: string } | undefined)?.state;
      store.register({ episodeId: "e1", taskId: "t", env: "smoke", agents });
      // not yet in run.db, but the store knows it (a second register is refused)
      expect(stateInDb("e1")).toBeUndefined();
      expect(store.register({ episodeId: "e1", taskId: "t", env: "smoke", agents })).toMatchObject({ kind: "exists" });
      await store.persisted("e1");
      expect(stateInDb("e1")).toBe("registered");
      let persisted = 0;
      store.on("persisted", () => (persisted += 1));
      store.claim({ episodeId: "e1" });
      store.tracker.record(fakeCall("e1", "solver", 0));
      expect(store.end("e1", { rewards: { solver: 1 } }).kind).toBe("ok");
      // ended and out of the live set: read back from the row not yet committed
      expect(store.get("e1")).toMatchObject({ state: "ended", rewards: { solver: 1 } });
      expect(stateInDb("e1")).toBe("registered");
      await store.persisted("e1");
      expect(stateInDb("e1")).toBe("ended");
      // readers of run.db hear that it moved (the claim's row and the end's)
      expect(persisted).toBe(2);
      expect((reader.prepare("SELECT COUNT(*) AS n FROM calls WHERE episode_id = 'e1'").get() as { n: number }).n).toBe(1);
      expect(store.get("e1")).toMatchObject({ state: "ended", rewards: { solver: 1 } });
      reader.close();
    } finally {
      for (const { store } of opened.splice(0)) store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("throws a coded storage error when run.db refuses a write", () => {
    const db = openRunDb(":memory:");
    const store = open(db);
    store.register({ episodeId: "e1", taskId: "t", env: "smoke", agents });
    db.exec("DROP TABLE episodes");
    expect(() => store.register({ episodeId: "e2", taskId: "t", env: "smoke", agents })).toThrow(
      expect.objectContaining({ code: "AJ_ERR_EPISODE_STORAGE" }),
    );
    expect(store.list().map((e) => e.episodeId)).toEqual(["e1"]);
  });

  it("aborts from registered or claimed with a reason, and says so on keys (409)", () => {
    const store = open();
    const aborted: Episode[] = [];
    store.on("aborted", (e) => aborted.push(e));
    store.register({ episodeId: "e1", taskId: "t", env: "smoke", agents });
    store.register({ episodeId: "e2", taskId: "t", env: "smoke", agents });
    store.abort("e1", { kind: "env_error", message: "bad task" });
    const { keys } = claimed(store);
    store.abort("e2", { kind: "client_lost", message: "gone" });
    expect(aborted.map((e) => [e.episodeId, e.abortReason?.kind])).toEqual([["e1", "env_error"], ["e2", "client_lost"]]);
    expect(store.authorize(keys.solver!)).toMatchObject({ kind: "conflict" });
    expect(store.inFlight()).toEqual([]);
  });

  it("reclaims an idle claim: back to registered, partial record discarded, old keys refused", () => {
    const store = open();
    const reclaimed: string[] = [];
    store.on("reclaimed", (e) => reclaimed.push(e.episodeId));
    store.register({ episodeId: "e1", taskId: "t", env: "smoke", agents });
    const first = claimed(store);
    store.tracker.record(fakeCall("e1", "solver", 0));
    clock += 9_000;
    store.touch("e1");
    clock += 9_000;
    expect(store.reclaimIdle()).toEqual([]);
    store.heartbeat("e1");
    clock += 10_000;
    expect(store.reclaimIdle().map((e) => e.state)).toEqual(["registered"]);
    expect(reclaimed).toEqual(["e1"]);
    expect(store.tracker.callsOf("e1")).toEqual([]);
    expect(store.inFlight()).toEqual([]);
    expect(store.authorize(first.keys.solver!)).toMatchObject({ kind: "conflict" });
    const second = claimed(store);
    expect(second.episode.attempt).toBe(2);
    expect(store.authorize(second.keys.solver!)).toMatchObject({ kind: "ok" });
  });

  // Regression: a client-driven episode (POST /v1/episodes/begin) whose claim went idle was registered
  // again, and sat in the queue for good: only its caller holds the task, and it had moved on.
  it("an idle claim registered with whenIdle 'abort' (a client-driven episode) is aborted as reclaimed, never queued again", () => {
    const store = open();
    const reclaimed: string[] = [];
    const aborted: string[] = [];
    store.on("reclaimed", (e) => reclaimed.push(e.episodeId));
    store.on("aborted", (e) => aborted.push(e.episodeId));
    store.register({ episodeId: "c1", taskId: "t", env: "smoke", agents, whenIdle: "abort" });
    const first = claimed(store);
    clock += 10_000;
    expect(store.reclaimIdle()).toEqual([]);
    expect(reclaimed).toEqual([]);
    expect(aborted).toEqual(["c1"]);
    expect(store.get("c1")).toMatchObject({ state: "aborted", abortReason: { kind: "reclaimed", message: "no chat call or heartbeat for 10 s (server.idleTimeoutS)" } });
    expect(store.list({ state: "registered" })).toEqual([]);
    expect(store.claim()).toEqual({ kind: "empty" });
    expect(store.authorize(first.keys.solver!)).not.toMatchObject({ kind: "ok" });
  });

  it("claims oldest first and honours the claims gate", () => {
    const store = open();
    expect(store.claim()).toEqual({ kind: "empty" });
    store.register({ episodeId: "a", taskId: "t", env: "smoke", agents });
    store.register({ episodeId: "b", taskId: "t", env: "smoke", agents });
    store.pauseClaims();
    expect(store.claimsPaused()).toBe(true);
    expect(store.claim()).toEqual({ kind: "paused" });
    store.resumeClaims();
    expect(claimed(store).episode.episodeId).toBe("a");
    expect(claimed(store).episode.episodeId).toBe("b");
    expect(store.inFlight()).toEqual(["a", "b"]);
    expect(store.abandon(["a", "missing"]).map((e) => [e.episodeId, e.state, e.abortReason?.kind])).toEqual([["a", "aborted", "abandoned"]]);
    expect(store.inFlight()).toEqual(["b"]);
  });

  it("refuses keys for unknown episodes and mismatched agents (401)", () => {
    const a = open();
    const b = open();
    a.register({ episodeId: "e1", taskId: "t", env: "smoke", agents });
    const { keys } = claimed(a);
    expect(b.authorize(keys.solver!)).toMatchObject({ kind: "unauthorized" });
    expect(a.authorize("sk-aj-nope.nope")).toMatchObject({ kind: "unauthorized" });
  });

  it("keeps finished episodes' calls across a restart and aborts the open ones", () => {
    const dir = mkdtempSync(join(tmpdir(), "aj-store-"));
    const db1 = openRunDb(`${dir}/run.db`);
    const s1 = open(db1);
    s1.register({ episodeId: "done", taskId: "t", env: "smoke", agents });
    s1.register({ episodeId: "open", taskId: "t", env: "smoke", agents });
    claimed(s1, "done");
    claimed(s1, "open");
    s1.tracker.record(fakeCall("done", "solver", 0));
    s1.tracker.record(fakeCall("done", "solver", 1));
    s1.end("done", { rewards: { solver: 0.5 } });
    s1.close();
    db1.close();
    const db2 = openRunDb(`${dir}/run.db`);
    const s2 = open(db2);
    expect(s2.tracker.callsOf("done").map((c) => c.seq)).toEqual([0, 1]);
    expect(s2.tracker.callsOf("done")[0]).toMatchObject({ outputIds: [4, 5], outputLogprobs: [-0.1, -0.2], headerIds: [3] });
    expect(s2.get("done")).toMatchObject({ state: "ended", rewards: { solver: 0.5 } });
    expect(s2.get("open")).toMatchObject({ state: "aborted", abortReason: { kind: "server-restart" } });
    db2.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a throwing listener does not break the transition", () => {
    const errors: unknown[] = [];
    const store = createEpisodeStore({ db: openRunDb(":memory:"), policies: ["main"], reclaimTimer: false, onListenerError: (e) => errors.push(e) });
    const off = store.on("registered", () => {
      throw new Error("listener bug");
    });
    expect(store.register({ taskId: "t", env: "smoke", agents: { solver: { kind: "policy", target: "main" } } }).kind).toBe("ok");
    expect(errors).toHaveLength(1);
    off();
    store.register({ taskId: "t", env: "smoke", agents: { solver: { kind: "policy", target: "main" } } });
    expect(errors).toHaveLength(1);
  });
});

describe("episode store as the training coordinator's port", () => {
  it("reports ends as rewarded, aborts as infra-failed, abandons as abandoned", async () => {
    const { createEpisodeStorePort } = await import("../../../server/episodes/episode-store-port.ts");
    const store = open();
    const port = createEpisodeStorePort(store);
    const seen: Array<[string, string]> = [];
    const off = port.onEnded((e) => seen.push([e.episodeId, e.outcome.kind]));
    for (const id of ["r", "f", "a"]) {
      store.register({ episodeId: id, taskId: "t", env: "smoke", agents });
      store.claim({ episodeId: id });
    }
    store.tracker.record(fakeCall("r", "solver", 0));
    store.end("r", { rewards: { solver: 1 } });
    store.abort("f", { kind: "sandbox_crash", message: "oom" });
    expect(port.inFlight()).toEqual(["a"]);
    await port.abandon(["a"]);
    expect(seen).toEqual([["r", "rewarded"], ["f", "infra-failed"], ["a", "abandoned"]]);
    off();
  });
});
