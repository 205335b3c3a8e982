import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClientEnvironment } from "../../sdk/swarm/client.ts";
import { openFixtureEnv } from "./fixtures/fixture-envs.ts";
import { type ScriptedSwarm, schedulerEnv, startScriptedSwarm, waitFor, waitForBatches } from "./fixtures/scripted-swarm.ts";
import { spawnClient, stopChild } from "./fixtures/spawn-client.ts";

let countUp: ClientEnvironment;
let relay: ClientEnvironment;
let swarm: ScriptedSwarm;
const children: Array<ReturnType<typeof spawnClient>> = [];

beforeAll(async () => {
  [countUp, relay] = await Promise.all([openFixtureEnv("count-up"), openFixtureEnv("relay")]);
});
afterAll(async () => {
  await Promise.all(children.map((c) => stopChild(c.child)));
  await swarm?.close();
  await Promise.all([countUp?.runtime.close(), relay?.runtime.close()]);
});

describe("a swarm of three clients, one killed mid-episode", () => {
  it("fills every batch with its quotas, with no duplicate or lost samples, re-running the killed client's episodes elsewhere", async () => {
    const groupSize = 3;
    swarm = await startScriptedSwarm([countUp.runtime, relay.runtime], {
      environments: [
        schedulerEnv(countUp.runtime, { weight: 0.5, hash: countUp.hash }),
        schedulerEnv(relay.runtime, { weight: 0.5, hash: relay.hash }),
      ],
      batchTasks: 4,
      groupSize,
      maxBatches: 2,
      leaseMs: 1500,
      heartbeatMs: 200,
      delayMs: 60,
    });
    // The victim starts first and gets a head start; the others connect while it is mid-episode.
    const victim = spawnClient({ server: swarm.url, clientId: "victim", envs: ["count-up", "relay"], concurrency: 6 });
    children.push(victim);
    await waitFor(() => swarm.events.some((e) => e.type === "client" && e.clientId === "victim"), 60_000, "the victim to connect");
    children.push(spawnClient({ server: swarm.url, clientId: "only-count-up", envs: ["count-up"], concurrency: 3 }));
    children.push(spawnClient({ server: swarm.url, clientId: "only-relay", envs: ["relay"], concurrency: 3 }));
    await waitFor(() => [...swarm.registry.episodes.values()].some((e) => e.clientId === "victim" && e.state === "claimed" && e.calls.length > 0), 60_000, "the victim to be mid-episode");

    const killedMidEpisode = [...swarm.registry.episodes.values()].filter((e) => e.clientId === "victim" && e.state === "claimed").map((e) => e.reg.episodeId);
    victim.child.kill("SIGKILL");
    expect(killedMidEpisode.length).toBeGreaterThan(0);

    await waitForBatches(swarm, 2, 90_000);
    const batches = swarm.events.flatMap((e) => (e.type === "batch" ? [e.batch] : []));
    for (const b of batches) {
      expect(b.quotas).toEqual({ "count-up": 2, relay: 2 });
      expect(b.filled).toEqual(b.quotas);
      expect(b.failedGroups).toBe(0);
      for (const g of b.groups) expect(g.episodes).toHaveLength(groupSize);
    }

    // Exactly one ended episode per (group, member): nothing lost, nothing twice.
    const slotOf = (episodeId: string) => episodeId.replace(/-t\d+$/, "");
    const ended = [...swarm.registry.episodes.values()].filter((e) => e.state === "ended");
    const slots = ended.map((e) => slotOf(e.reg.episodeId));
    expect(new Set(slots).size).toBe(slots.length);
    expect(slots.length).toBe(2 * 4 * groupSize);
    const sampleKeys = swarm.registry.samples.map((s) => `${s.episodeId}/${s.agentId}`);
    expect(new Set(sampleKeys).size).toBe(sampleKeys.length);
    expect(swarm.registry.samples).toHaveLength(2 * 2 * groupSize * 1 + 2 * 2 * groupSize * 2);

    // The victim's in-flight episodes were aborted (partial records discarded) and re-run by the others.
    for (const id of killedMidEpisode) {
      expect(swarm.registry.episodes.get(id)!.state).toBe("aborted");
      const rerun = ended.find((e) => slotOf(e.reg.episodeId) === slotOf(id));
      expect(rerun?.clientId).toMatch(/^only-/);
    }
    expect(swarm.events.some((e) => e.type === "client" && e.clientId === "victim" && e.status === "lost")).toBe(true);
  });
});
