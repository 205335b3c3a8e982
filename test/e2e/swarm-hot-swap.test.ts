import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClientEnvironment } from "../../sdk/swarm/client.ts";
import { FIXTURE_ENVS, openFixtureEnv } from "./fixtures/fixture-envs.ts";
import { type ScriptedSwarm, schedulerEnv, startScriptedSwarm, waitFor } from "./fixtures/scripted-swarm.ts";
import { spawnClient, stopChild } from "./fixtures/spawn-client.ts";

/** A workflow file with no imports: it answers with raw fetch and tags each result with its version. */
const workflowSource = (version: number) => `
export const workflow = async (episode) => {
  let turn = await episode.env.reset();
  while (turn.kind === "ok" && !turn.value.done) {
    const actions = {};
    for (const [agentId, obs] of Object.entries(turn.value.observations)) {
      const a = episode.agents[agentId];
      const res = await fetch(a.baseUrl + "/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer " + a.apiKey },
        body: JSON.stringify({ model: a.model, messages: obs.messages }),
      });
      actions[agentId] = (await res.json()).choices[0].message.content;
    }
    turn = await episode.env.step(actions);
  }
  if (turn.kind === "failed") return episode.abort(turn.failure);
  episode.end(turn.value.rewards ?? {}, { workflowVersion: ${version} });
};
`;

let countUp: ClientEnvironment;
let swarm: ScriptedSwarm;
const children: Array<ReturnType<typeof spawnClient>> = [];
const dir = mkdtempSync(join(tmpdir(), "agentjet-hot-swap-"));

beforeAll(async () => {
  countUp = await openFixtureEnv("count-up");
});
afterAll(async () => {
  await Promise.all(children.map((c) => stopChild(c.child)));
  await swarm?.close();
  await countUp?.runtime.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("hot-swap of the workflow file with --watch", () => {
  it("uses the edited workflow from the next episode on, without restarting the server", async () => {
    const file = join(dir, "agent.ts");
    writeFileSync(file, workflowSource(1));
    swarm = await startScriptedSwarm([countUp.runtime], {
      environments: [schedulerEnv(countUp.runtime)],
      batchTasks: 2,
      groupSize: 2,
      delayMs: 20,
    });
    children.push(spawnClient({ server: swarm.url, clientId: "hot", envs: ["count-up"], concurrency: 2, extra: ["--workflow", file, "--watch"] }));
    const versions = () => swarm.events.flatMap((e) => (e.type === "episode-end" ? [e.result.info.workflowVersion] : []));
    await waitFor(() => versions().includes(1), 60_000, "an episode of workflow v1");
    const batchesBefore = swarm.scheduler.stats().batchesCompleted;
    const editedAt = performance.now();
    writeFileSync(file, workflowSource(2));
    await waitFor(() => versions().includes(2), 30_000, "an episode of workflow v2");
    const ms = performance.now() - editedAt;
    console.log(`hot-swap: file change -> first episode ended with the new workflow: ${ms.toFixed(0)} ms`);
    await waitFor(() => versions().filter((v) => v === 2).length >= 4, 30_000, "more v2 episodes");
    // Only an episode already running at the edit (concurrency 2: at most one besides) may still end as v1.
    expect(versions().slice(versions().indexOf(2)).filter((v) => v === 1).length).toBeLessThanOrEqual(1);
    // The server side never restarted: the same scheduler kept counting batches.
    expect(swarm.scheduler.stats().batchesCompleted).toBeGreaterThanOrEqual(batchesBefore);
  }, 150_000);

  it("re-opens an edited local plugin and announces it again; its new reward code runs from the next episode", async () => {
    for (const c of children.splice(0)) await stopChild(c.child);
    await swarm?.close();
    const pluginDir = join(dir, "count-up");
    cpSync(join(FIXTURE_ENVS, "count-up"), pluginDir, { recursive: true });
    // No hash pinned: an edited local plugin keeps getting its environment's episodes.
    swarm = await startScriptedSwarm([countUp.runtime], { environments: [schedulerEnv(countUp.runtime)], batchTasks: 2, groupSize: 2, delayMs: 20 });
    children.push(spawnClient({ server: swarm.url, clientId: "hot-env", envs: ["count-up"], concurrency: 2, envPath: pluginDir, extra: ["--watch"] }));
    const rewards = () => swarm.events.flatMap((e) => (e.type === "episode-end" ? [e.result.rewards.solver] : []));
    await waitFor(() => rewards().includes(1), 60_000, "an episode scored by the original reward code").catch((err) => {
      throw new Error(`${(err as Error).message}\n${children[0]!.output()}`);
    });
    const src = join(pluginDir, "src", "index.ts");
    const editedAt = performance.now();
    writeFileSync(src, readFileSync(src, "utf8").replace("right ? 1 : 0", "right ? 0.5 : 0"));
    await waitFor(() => rewards().includes(0.5), 60_000, "an episode scored by the edited reward code").catch((err) => {
      throw new Error(`${(err as Error).message}\n${children[0]!.output()}`);
    });
    console.log(`hot-swap: plugin file change -> first episode scored by the new reward code: ${(performance.now() - editedAt).toFixed(0)} ms`);
  }, 150_000);
});
