import { describe, expect, it } from "vitest";
import { waitFor } from "./fixtures/scripted-swarm.ts";
import { spawnClient } from "./fixtures/spawn-client.ts";
import { twoEnvSwarm } from "./fixtures/two-env-swarm.ts";

const suite = twoEnvSwarm();

describe("a swarm of three clients on the real server, one killed mid-episode", () => {
  it("fills every batch with its quotas, with no duplicate or lost samples, re-running the killed client's episodes elsewhere", async () => {
    const groupSize = 3;
    const batches = 2;
    const { countUp, relay, children } = suite;
    const swarm = await suite.start({
      batchTasks: 4,
      groupSize,
      maxBatches: batches,
      leaseMs: 1500,
      heartbeatMs: 200,
      delayMs: 60,
    });
    const store = swarm.app.agentjet.store;
    // The victim starts first; the others connect while it is mid-episode.
    const victim = spawnClient({ server: swarm.url, clientId: "victim", envs: ["count-up", "relay"], concurrency: 6, token: swarm.token });
    children.push(victim);
    await waitFor(() => swarm.events.some((e) => e.type === "client" && e.clientId === "victim"), 60_000, "the victim to connect");
    children.push(spawnClient({ server: swarm.url, clientId: "only-count-up", envs: ["count-up"], concurrency: 3, token: swarm.token }));
    children.push(spawnClient({ server: swarm.url, clientId: "only-relay", envs: ["relay"], concurrency: 3, token: swarm.token }));
    const victimMidEpisode = () => store.list({ state: "claimed" }).filter((e) => e.clientId === "victim" && store.tracker.callsOf(e.episodeId).length > 0);
    await waitFor(() => victimMidEpisode().length > 0, 60_000, "the victim to be mid-episode");
    const killed = store.list({ state: "claimed" }).filter((e) => e.clientId === "victim").map((e) => e.episodeId);
    victim.child.kill("SIGKILL");

    await waitFor(() => swarm.events.filter((e) => e.type === "batch").length >= batches, 90_000, "both batches");
    const reports = swarm.events.flatMap((e) => (e.type === "batch" ? [e.batch] : []));
    for (const b of reports) {
      expect(b.quotas).toEqual({ "count-up": 2, relay: 2 });
      expect(b.filled).toEqual(b.quotas);
      expect(b.failedGroups).toBe(0);
      for (const g of b.groups) expect(g.episodes).toHaveLength(groupSize);
    }

    // Exactly one ended episode per (group, member) in the server's store: nothing lost, nothing twice.
    const slotOf = (episodeId: string) => episodeId.replace(/-t\d+$/, "");
    const trainEnded = swarm.ended.filter((e) => !e.episode.eval);
    const slots = trainEnded.map((e) => slotOf(e.episode.episodeId));
    expect(new Set(slots).size).toBe(slots.length);
    expect(slots.length).toBe(batches * 4 * groupSize);
    // Every ended episode's recorded calls: count-up one call, relay four (two per seat); all rewarded 1.
    for (const e of trainEnded) {
      expect(e.calls.length).toBe(e.episode.env === "count-up" ? 1 : 4);
      for (const r of Object.values(e.episode.rewards ?? {})) expect(r).toBe(1);
    }

    // The victim's in-flight episodes were aborted as lost (their partial calls discarded) and re-run by the others.
    expect(killed.length).toBeGreaterThan(0);
    for (const id of killed) {
      const a = swarm.aborted.find((x) => x.episode.episodeId === id);
      expect(a?.episode.abortReason?.kind).toBe("client-lost");
      const rerun = trainEnded.find((e) => slotOf(e.episode.episodeId) === slotOf(id));
      expect(rerun?.episode.clientId).toMatch(/^only-/);
    }
    expect(swarm.events.some((e) => e.type === "client" && e.clientId === "victim" && e.status === "lost")).toBe(true);
  });
});
