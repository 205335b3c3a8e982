import { afterEach, describe, expect, it } from "vitest";
import { acceptsDevVersions, describeMismatch, matchEnvironment, type SchedulerEnvironment } from "../../../hub/scheduler/index.ts";
import { registryFromEpisodeStore } from "../../../hub/scheduler/index.ts";
import { openRunDb } from "../../../server/db/run-db.ts";
import { createEpisodeStore } from "../../../server/episodes/episode-store.ts";
import { ENV_MISMATCH_CODE } from "../../../sdk/swarm/protocol.ts";
import { SimClient, until } from "./fixtures/sim-client.ts";
import { createTestScheduler } from "./fixtures/test-scheduler.ts";

const PINNED = "9c1b".padEnd(64, "0");
const EDITED = "3f2a".padEnd(64, "1");
const solo = [{ id: "solver", role: "solver" }];
const env = (extra: Partial<SchedulerEnvironment> = {}): SchedulerEnvironment => ({
  name: "my-env",
  version: "1.0.0",
  hash: PINNED,
  weight: 1,
  split: "train",
  agents: solo,
  roles: { solver: "policy" },
  maxTurns: 4,
  ...extra,
});

const open: Array<{ close(): Promise<void> | void }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
});

async function make(environment: SchedulerEnvironment) {
  const db = openRunDb(":memory:");
  const store = createEpisodeStore({ db, policies: ["policy"], frozen: [] });
  const { scheduler, events } = await createTestScheduler({
    environments: [environment],
    loadTasks: async (_env, split) => Array.from({ length: 4 }, (_, i) => ({ id: `t${i}`, split, data: i })),
    registry: registryFromEpisodeStore(store),
    batchTasks: 1,
    leaseMs: 5000,
  });
  open.push(scheduler, store, { close: () => void db.close() });
  return { scheduler, store, events };
}

describe("matchEnvironment", () => {
  const dev = { name: "my-env", version: "1.0.0", hash: EDITED, dev: true };
  it("routes a development version whatever its hash only when the run accepts them", () => {
    expect(matchEnvironment(env({ acceptDev: true }), dev)).toEqual({ kind: "match" });
    expect(matchEnvironment(env(), dev)).toMatchObject({ kind: "mismatch" });
    const { hash: _pinned, ...unpinned } = env();
    expect(matchEnvironment(unpinned, dev)).toEqual({ kind: "match" });
    expect(matchEnvironment(env(), { ...dev, hash: PINNED })).toEqual({ kind: "match" });
  });
  it("never routes another pinned build or another version, dev versions allowed or not", () => {
    expect(matchEnvironment(env({ acceptDev: true }), { ...dev, dev: false })).toMatchObject({ kind: "mismatch" });
    expect(matchEnvironment(env({ acceptDev: true }), { ...dev, version: "1.1.0" })).toMatchObject({ kind: "mismatch" });
  });
  it("explains a refusal with both hashes and the fix", () => {
    const text = describeMismatch([env()], [dev])!;
    expect(text).toContain(PINNED.slice(0, 12));
    expect(text).toContain(EDITED.slice(0, 12));
    expect(text).toContain("allowDev: true");
    expect(text).toContain("re-pin");
    expect(describeMismatch([env({ acceptDev: true })], [dev])).toBeNull();
  });
  it("is on for entries with a local path, off by default, and allowDev wins", () => {
    expect(acceptsDevVersions({})).toBe(false);
    expect(acceptsDevVersions({ path: "./my-env" })).toBe(true);
    expect(acceptsDevVersions({ path: "./my-env", allowDev: false })).toBe(false);
    expect(acceptsDevVersions({ allowDev: true })).toBe(true);
  });
});

describe("a development-version client", () => {
  it("gets episodes when the run accepts dev versions, and each episode records the code it ran with", async () => {
    const { scheduler, store, events } = await make(env({ acceptDev: true }));
    scheduler.start();
    const c = new SimClient(scheduler, "dev", [{ name: "my-env", version: "1.0.0", hash: EDITED, dev: true }], 2);
    c.hello();
    await until(() => c.open().length === 2);
    for (const a of c.open()) c.end(a, { solver: 1 }, { hash: EDITED, dev: true });
    await until(() => events.some((e) => e.type === "batch"));
    expect(c.inbox.some((m) => m.type === "error")).toBe(false);
    const ended = events.flatMap((e) => (e.type === "episode-end" ? [e.result] : []));
    expect(ended.map((r) => r.code)).toEqual([
      { hash: EDITED, dev: true },
      { hash: EDITED, dev: true },
    ]);
    expect(store.get(ended[0]!.episodeId)?.metadata.code).toEqual({ hash: EDITED, dev: true });
  });

  it("gets a refusal with the hashes and the fix, and the server side hears the same, when the run pins its hash", async () => {
    const { scheduler, events } = await make(env());
    scheduler.start();
    const c = new SimClient(scheduler, "dev", [{ name: "my-env", version: "1.0.0", hash: EDITED, dev: true }], 2);
    c.hello();
    await until(() => c.inbox.some((m) => m.type === "error"));
    const refusal = c.inbox.find((m) => m.type === "error");
    expect(refusal).toMatchObject({ type: "error", code: ENV_MISMATCH_CODE });
    const message = refusal!.type === "error" ? refusal!.message : "";
    expect(message).toContain(`accepts only the pinned hash ${PINNED.slice(0, 12)}`);
    expect(message).toContain(EDITED.slice(0, 12));
    expect(events).toContainEqual({ type: "env-mismatch", clientId: "dev", message });
    expect(c.assignments()).toHaveLength(0);
    expect(c.closed).toBe(false);
    // Re-announcing the pinned build (the edit undone) gets episodes on the same connection.
    c.envs[0]!.hash = PINNED;
    c.envs[0]!.dev = false;
    c.hello();
    await until(() => c.open().length === 2);
  });

  it("re-announcing on the same socket (a hot swap) keeps the episodes assigned to it, even those it has not seen yet", async () => {
    const { scheduler, events } = await make(env({ acceptDev: true }));
    scheduler.start();
    const c = new SimClient(scheduler, "dev", [{ name: "my-env", version: "1.0.0", hash: EDITED, dev: true }], 2);
    c.hello();
    await until(() => c.open().length === 2);
    // The reload's hello lists none of them: both assignments are still on the wire.
    c.envs[0]!.hash = "4d5e".padEnd(64, "2");
    c.hello([]);
    expect(events.filter((e) => e.type === "episode-abort")).toHaveLength(0);
    for (const a of c.open()) c.end(a, { solver: 1 }, { hash: EDITED, dev: true });
    await until(() => events.some((e) => e.type === "batch"));
    expect(scheduler.stats().staleResults).toBe(0);
  });

  it("a result run with edited code the run refuses (assigned before the re-announce arrived) is not recorded; the episode runs again", async () => {
    const { scheduler, store, events } = await make(env());
    scheduler.start();
    const c = new SimClient(scheduler, "edited", [{ name: "my-env", version: "1.0.0", hash: PINNED, dev: true }], 2);
    c.hello();
    await until(() => c.open().length === 2);
    const [first, second] = c.open();
    c.end(first!, { solver: 1 }, { hash: EDITED, dev: true });
    c.end(second!, { solver: 1 }, { hash: PINNED, dev: true });
    await until(() => events.some((e) => e.type === "episode-abort"));
    const ended = events.flatMap((e) => (e.type === "episode-end" ? [e.result] : []));
    expect(ended.map((r) => r.code?.hash)).toEqual([PINNED]);
    const abort = events.find((e) => e.type === "episode-abort");
    expect(JSON.stringify(abort)).toContain("refuses");
    expect(store.get(first!.episodeId)?.metadata.code).toBeUndefined();
    await until(() => c.open().length === 1);
  });
});
