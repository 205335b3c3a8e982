import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClientEnvironment, SwarmClient } from "../../sdk/swarm/client.ts";
import type { Workflow } from "../../sdk/swarm/workflow.ts";
import { openFixtureEnv } from "../e2e/fixtures/fixture-envs.ts";
import { schedulerEnv, startScriptedSwarm, waitForBatches } from "../e2e/fixtures/scripted-swarm.ts";

let countUp: ClientEnvironment;
let relay: ClientEnvironment;

beforeAll(async () => {
  [countUp, relay] = await Promise.all([openFixtureEnv("count-up"), openFixtureEnv("relay")]);
});
afterAll(async () => {
  await Promise.all([countUp?.runtime.close(), relay?.runtime.close()]);
});

/** One seeded run with a workflow; returns the recorded token ids per (episode, agent) and the rewards. */
async function record(workflow: Workflow) {
  const swarm = await startScriptedSwarm([countUp.runtime, relay.runtime], {
    environments: [schedulerEnv(countUp.runtime), schedulerEnv(relay.runtime)],
    batchTasks: 2,
    groupSize: 2,
    maxBatches: 1,
    seed: 11,
  });
  const client = new SwarmClient({ url: swarm.url, environments: [countUp, relay], concurrency: 4, workflow });
  try {
    await client.start();
    await waitForBatches(swarm, 1);
    const batch = swarm.events.flatMap((e) => (e.type === "batch" ? [e.batch] : []))[0]!;
    const tokens = Object.fromEntries(swarm.registry.samples.map((s) => [`${s.episodeId}/${s.agentId}`, s.tokenIds]));
    const rewards = Object.fromEntries(batch.groups.flatMap((g) => g.episodes.map((e) => [e.episodeId, e.rewards])));
    return { tokens, rewards, failed: batch.failedGroups };
  } finally {
    await client.stop();
    await swarm.close();
  }
}

describe("framework-agnostic workflows", () => {
  it("records identical token sequences with openai, LangChain.js, the Vercel AI SDK and raw fetch", async () => {
    const frameworks = ["openai", "langchain", "ai-sdk", "fetch"] as const;
    const runs: Record<string, Awaited<ReturnType<typeof record>>> = {};
    for (const f of frameworks) {
      const mod = (await import(`./fixtures/workflows/${f}.ts`)) as { workflow: Workflow };
      runs[f] = await record(mod.workflow);
    }
    const reference = runs.fetch!;
    expect(reference.failed).toBe(0);
    expect(Object.keys(reference.tokens)).toHaveLength(2 * 1 + 2 * 2);
    for (const t of Object.values(reference.tokens)) expect(t.length).toBeGreaterThan(0);
    for (const f of frameworks) {
      expect(runs[f]!.failed, f).toBe(0);
      expect(runs[f]!.tokens, f).toEqual(reference.tokens);
      expect(runs[f]!.rewards, f).toEqual(reference.rewards);
    }
  });
});
