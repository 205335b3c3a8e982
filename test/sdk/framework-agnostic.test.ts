import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClientEnvironment, SwarmClient } from "../../sdk/swarm/client.ts";
import type { Workflow } from "../../sdk/swarm/workflow.ts";
import { promptIds } from "../../server/tokenizers/prompt-ids.ts";
import { closeFixtureEnvs, openFixtureEnvs } from "../e2e/fixtures/fixture-envs.ts";
import { startRealSwarm } from "../e2e/fixtures/real-swarm.ts";
import { schedulerEnv, waitFor } from "../e2e/fixtures/scripted-swarm.ts";

let countUp: ClientEnvironment;
let relay: ClientEnvironment;

beforeAll(async () => {
  [countUp, relay] = await openFixtureEnvs("count-up", "relay");
});
afterAll(() => closeFixtureEnvs(countUp, relay));

/** One seeded run on the real server with a workflow; returns the token ids its tracker recorded per call, and the rewards. */
async function record(workflow: Workflow) {
  const swarm = await startRealSwarm([countUp.runtime, relay.runtime], {
    environments: [schedulerEnv(countUp.runtime), schedulerEnv(relay.runtime)],
    batchTasks: 2,
    groupSize: 2,
    maxBatches: 1,
    seed: 11,
  });
  const client = new SwarmClient({ url: swarm.url, ...(swarm.token ? { token: swarm.token } : {}), environments: [countUp, relay], concurrency: 4, workflow });
  try {
    await client.start();
    await waitFor(() => swarm.events.some((e) => e.type === "batch"), 30_000, "the batch");
    const batch = swarm.events.flatMap((e) => (e.type === "batch" ? [e.batch] : []))[0]!;
    const tokens = Object.fromEntries(
      swarm.ended.flatMap((e) =>
        e.calls.map((c) => [`${c.episodeId}/${c.agentId}/${c.seq}`, [...promptIds(c), ...c.outputIds]]),
      ),
    );
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
    // count-up: 2 episodes x 1 call; relay: 2 episodes x 4 calls (two per seat).
    expect(Object.keys(reference.tokens)).toHaveLength(2 * 1 + 2 * 4);
    for (const t of Object.values(reference.tokens)) expect(t.length).toBeGreaterThan(0);
    for (const f of frameworks) {
      expect(runs[f]!.failed, f).toBe(0);
      expect(runs[f]!.tokens, f).toEqual(reference.tokens);
      expect(runs[f]!.rewards, f).toEqual(reference.rewards);
    }
  });
});
