import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registryFromEpisodeStore } from "../../hub/scheduler/index.ts";
import { buildServer } from "../../server/app/build-server.ts";
import { RunConfigSchema } from "../../server/config/run-config.ts";
import { createZeroLatencyEngine } from "../doubles/zero-latency-engine.ts";
import { createEmbeddedTokenizer } from "../../server/tokenizers/embedded.ts";
import type { CallRecord } from "../../server/tracker/call-record.ts";
import { type ClientEnvironment, SwarmClient } from "../../sdk/swarm/client.ts";
import { defineWorkflow } from "../../sdk/swarm/workflow.ts";
import { createDefaultAgentLoop } from "../../sdk/swarm/default-agent-loop.ts";
import { type AttachedSwarm, attachSwarm } from "./fixtures/attach-swarm.ts";
import { openFixtureEnv } from "./fixtures/fixture-envs.ts";
import { schedulerEnv, waitFor } from "./fixtures/scripted-swarm.ts";

const tokenizer = createEmbeddedTokenizer();
let countUp: ClientEnvironment;
let swarm: AttachedSwarm;

beforeAll(async () => {
  countUp = await openFixtureEnv("count-up");
});
afterAll(async () => {
  await swarm?.close();
  await countUp?.runtime.close();
});

describe("the scheduler and swarm plugin on the real swarm server", () => {
  it("registers, claims and ends episodes in the server's EpisodeStore; a retried episode's first calls are discarded", async () => {
    // The zero-latency engine (a test double for a model) answers count-up right: it reads the prompt.
    const engine = createZeroLatencyEngine({
      respond: (promptIds) => {
        const n = [...tokenizer.decode(promptIds).matchAll(/comes after (\d+)/g)].at(-1)?.[1];
        return tokenizer.encode(String(Number(n ?? 0) + 1));
      },
    });
    const config = RunConfigSchema.parse({
      policies: { policy: { tokenizer: "embedded" } },
      environments: [{ name: "count-up", roles: { solver: "policy" } }],
      sampling: { temperature: 0, maxTokens: 8 },
    });
    const app = await buildServer({ config, dbPath: ":memory:", keySecret: "swarm-test", reclaimTimer: false, engines: { policy: engine } });
    const store = app.agentjet.store;
    const ended: Array<{ episodeId: string; calls: CallRecord[]; rewards: Record<string, number> | null }> = [];
    const aborted: Array<{ episodeId: string; calls: CallRecord[] }> = [];
    store.on("ended", (e, calls) => ended.push({ episodeId: e.episodeId, calls, rewards: e.rewards }));
    store.on("aborted", (e, calls) => aborted.push({ episodeId: e.episodeId, calls }));

    swarm = await attachSwarm(app, [countUp.runtime], registryFromEpisodeStore(store), {
      environments: [schedulerEnv(countUp.runtime, { hash: countUp.hash })],
      batchTasks: 2,
      groupSize: 2,
      infraRetries: 1,
      seed: 3,
      maxBatches: 1,
      leaseMs: 2000,
    });
    const { events } = swarm;

    // Member 0's first try makes its chat call, then fails as a crashed sandbox would.
    const loop = createDefaultAgentLoop();
    const workflow = defineWorkflow(async (episode) => {
      if (episode.attempt === 0 && episode.episodeId.includes("-m0-")) {
        await loop({ ...episode, end: () => undefined, abort: () => undefined });
        return episode.abort({ kind: "crash", message: "simulated crash after the call" });
      }
      await loop(episode);
    });
    const client = new SwarmClient({ url: swarm.url, token: swarm.token!, environments: [countUp], concurrency: 4, workflow });
    try {
      await client.start();
      await waitFor(() => events.some((e) => e.type === "batch"), 30_000, "the batch");
    } finally {
      await client.stop();
    }
    const batch = events.flatMap((e) => (e.type === "batch" ? [e.batch] : []))[0]!;
    expect(batch.failedGroups).toBe(0);
    expect(batch.groups.flatMap((g) => g.episodes.map((e) => e.rewards.solver))).toEqual([1, 1, 1, 1]);
    expect(ended).toHaveLength(4);
    for (const e of ended) expect(e.calls).toHaveLength(1);
    expect(aborted).toHaveLength(2);
    // The store discarded the crashed tries' partial records; the keys of those tries are dead.
    for (const a of aborted) expect(store.get(a.episodeId)?.state).toBe("aborted");
  });
});
