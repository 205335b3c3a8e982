import { afterEach, describe, expect, it } from "vitest";
import { registryFromEpisodeStore } from "../../../hub/scheduler/index.ts";
import { openRunDb } from "../../../server/db/run-db.ts";
import { createEpisodeStore } from "../../../server/episodes/episode-store.ts";

const open: Array<() => void> = [];
afterEach(() => {
  for (const close of open.splice(0)) close();
});

function registry() {
  const db = openRunDb(":memory:");
  const store = createEpisodeStore({ db, policies: ["policy"], frozen: [] });
  open.push(() => store.close(), () => db.close());
  const reg = registryFromEpisodeStore(store);
  reg.register({
    episodeId: "e1",
    taskId: "t1",
    env: "my-env",
    envVersion: "1.0.0",
    purpose: "train",
    groupId: "g1",
    samplingKey: "g1",
    agents: [{ agentId: "solver", role: "solver", target: { kind: "policy", name: "policy" } }],
  });
  return { store, reg };
}

describe("the episode store as the scheduler's registry", () => {
  it("a heartbeat or an abort of an episode the store already ended is no news: nothing throws, the ended episode stays as it was", async () => {
    const { store, reg } = registry();
    expect(reg.claim("e1", "c1")).toMatchObject({ kind: "claimed" });
    await reg.end("e1", { solver: 1 }, {}, { hash: "a".repeat(64), dev: false });
    expect(() => reg.heartbeat("e1")).not.toThrow();
    expect(() => reg.abort("e1", { kind: "client-lost", message: "late" })).not.toThrow();
    expect(store.get("e1")).toMatchObject({ state: "ended", metadata: { code: { hash: "a".repeat(64), dev: false } } });
  });

  it("refuses what the scheduler must hear about: a second end, a claim of an unknown episode", async () => {
    const { reg } = registry();
    reg.claim("e1", "c1");
    await reg.end("e1", { solver: 1 }, {});
    expect(() => reg.end("e1", { solver: 0 }, {})).toThrow();
    expect(() => reg.claim("nope", "c1")).toThrow();
  });
});
