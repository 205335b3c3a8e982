import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registryFromEpisodeStore, schedulerOptionsFromRunConfig } from "../../hub/scheduler/index.ts";
import { startLocalClients } from "../../hub/swarm/local-clients.ts";
import { buildServer } from "../../server/app/build-server.ts";
import { RunConfigSchema } from "../../server/config/run-config.ts";
import { createEpisodeStorePort } from "../../server/episodes/episode-store-port.ts";
import type { Episode } from "../../server/episodes/episode.ts";
import { createEmbeddedTokenizer } from "../../server/tokenizers/embedded.ts";
import type { CallRecord } from "../../server/tracker/call-record.ts";
import { TrainingCoordinator } from "../../server/training/coordinator.ts";
import { SamplePool } from "../../server/training/sample-pool.ts";
import type { Sample } from "../../server/training/sample.ts";
import { selectTrainingConfig } from "../../server/training/training-config.ts";
import type { Task } from "../../sdk/env/protocol.ts";
import type { Assignment } from "../../sdk/swarm/protocol.ts";
import type { ClientEnvironment } from "../../sdk/swarm/client.ts";
import { type AttachedSwarm, attachSwarm } from "./fixtures/attach-swarm.ts";
import { openFixtureEnv } from "./fixtures/fixture-envs.ts";
import { waitFor } from "./fixtures/scripted-swarm.ts";

const WEREWOLVES_DIR = new URL("../../environments/werewolves", import.meta.url).pathname;
// The embedded tokenizer is about one token per character: late in a game a seat's conversation passes
// 2048 tokens, so its calls overflow (recorded, answered empty, dropped from merging) and the invalid-decision
// fallback carries the game on. Decoding cost grows with the square of the context, so this keeps the file fast.
const TINY = { kind: "embedded", model: { layers: 1, dim: 16, heads: 2, context: 2048 } } as const;
const BUILTIN = "@builtin";
/** batchTasks x groupSize: two tasks, each played twice. */
const EPISODES = 4;
const tokenizer = createEmbeddedTokenizer();

let werewolves: ClientEnvironment;
let tasks: Map<string, Task>;

beforeAll(async () => {
  werewolves = await openFixtureEnv("werewolves", { dir: WEREWOLVES_DIR, maxInstances: 2 });
  tasks = new Map((await werewolves.runtime.listTasks("train")).map((t) => [t.id, t]));
});
afterAll(async () => {
  await werewolves?.runtime.close();
});

interface Played {
  ended: Array<{ episode: Episode; calls: CallRecord[] }>;
  assignments: Map<string, Assignment>;
  pooled: Map<string, Sample[]>;
}

/**
 * Real games through the real server: embedded policies, the scheduler and swarm plugin, a local swarm
 * client, and the training coordinator pooling every ended episode (its `any-client` strategy never fires
 * here: the default agent loop never agrees to sync, so the pool keeps everything for inspection).
 */
async function playGames(policies: readonly string[], roles: Record<string, string>): Promise<Played> {
  const config = RunConfigSchema.parse({
    run: { seed: 11, steps: 1 },
    policies: Object.fromEntries(policies.map((p, i) => [p, { engine: { ...TINY, model: { ...TINY.model, seed: i } }, tokenizer: "embedded" }])),
    environments: [{ name: "werewolves", roles, maxTurns: 1000 }],
    sampling: { temperature: 1, maxTokens: 6 },
    batching: { strategy: "any-client", batchTasks: 2, groupSize: 2, filterEqualRewards: false, infraRetries: 0 },
  });
  const app = await buildServer({ config, dbPath: ":memory:", keySecret: "werewolves-e2e", reclaimTimer: false });
  const { store, db } = app.agentjet;
  const pool = new SamplePool(db);
  const coordinator = new TrainingCoordinator({
    store: createEpisodeStorePort(store),
    engines: Object.fromEntries(policies.map((p) => [p, app.agentjet.policies.get(p)!.engine])),
    pool,
    config: selectTrainingConfig(config),
    tickMs: 0,
  });
  coordinator.start();
  const ended: Played["ended"] = [];
  store.on("ended", (episode, calls) => ended.push({ episode, calls }));
  const origin = () => `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const { runtime, hash } = werewolves;
  const registry = registryFromEpisodeStore(store);
  const options = schedulerOptionsFromRunConfig(config, {
    resolve: () => ({ version: runtime.manifest.version, hash, agents: runtime.manifest.agents }),
    loadTasks: (_env, split) => runtime.listTasks(split),
    registry,
    baseUrl: () => `${origin()}/v1`,
    leaseMs: 10_000,
  });
  const assignments = new Map<string, Assignment>();
  let swarm: AttachedSwarm | undefined;
  let clients: { stop: () => Promise<void> } | undefined;
  try {
    swarm = await attachSwarm(app, [runtime], registry, { ...options, environments: [...options.environments] });
    clients = await startLocalClients({
      url: swarm.url,
      token: swarm.token,
      count: 1,
      environments: [werewolves],
      concurrency: 2,
      onEvent: (_id, e) => {
        if (e.type === "episode-start") assignments.set(e.assignment.episodeId, e.assignment);
      },
    });
    const { events } = swarm;
    await waitFor(() => events.some((e) => e.type === "batch"), 180_000, "a batch of werewolves games");
    await waitFor(() => ended.length === EPISODES, 5_000, "the store's ended episodes");
    expect(events.filter((e) => e.type === "episode-abort")).toEqual([]);
    expect(events.flatMap((e) => (e.type === "batch" ? [e.batch.failedGroups] : []))).toEqual([0]);
    const pooled = new Map(policies.map((p) => [p, pool.loadSamples(pool.entries(p))]));
    for (const p of policies) expect(pool.entries(p).map((e) => e.sampleCount)).toEqual(pool.entries(p).map(() => 1));
    return { ended, assignments, pooled };
  } finally {
    await clients?.stop();
    await coordinator.stop();
    if (swarm) await swarm.close();
    else await app.close();
  }
}

/** The documented resolution, written out independently: seat k of role r takes `r#k`, else `r`, else `*`. */
function expectedTargets(task: Task, roles: Record<string, string>): Map<string, { role: string; target: string }> {
  const seen = new Map<string, number>();
  const out = new Map<string, { role: string; target: string }>();
  for (const seat of task.agents!) {
    const k = (seen.get(seat.role) ?? 0) + 1;
    seen.set(seat.role, k);
    out.set(seat.id, { role: seat.role, target: roles[`${seat.role}#${k}`] ?? roles[seat.role] ?? roles["*"]! });
  }
  return out;
}

const ROLE_NOTE: Record<string, string> = {
  werewolf: "You are a werewolf.",
  villager: "You are a villager.",
  seer: "You are the seer.",
  witch: "You are the witch.",
  hunter: "You are the hunter.",
};

/** The runs of generated (loss-masked) tokens of a sample, with their log-probs. */
function generatedRuns(s: Sample): Array<{ ids: number[]; logprobs: number[] }> {
  const runs: Array<{ ids: number[]; logprobs: number[] }> = [];
  s.lossMask.forEach((m, i) => {
    if (m !== 1) return;
    if (i === 0 || s.lossMask[i - 1] !== 1) runs.push({ ids: [], logprobs: [] });
    runs.at(-1)!.ids.push(s.tokenIds[i]!);
    runs.at(-1)!.logprobs.push(s.logprobs[i]!);
  });
  return runs;
}

function checkPools(played: Played, policies: readonly string[], roles: Record<string, string>): void {
  expect(played.ended).toHaveLength(EPISODES);
  for (const { episode, calls } of played.ended) {
    const task = tasks.get(episode.taskId)!;
    const expected = expectedTargets(task, roles);
    const trained = [...expected].filter(([, e]) => e.target !== BUILTIN);
    const builtin = [...expected].filter(([, e]) => e.target === BUILTIN).map(([id]) => id);

    // The scheduler resolved the task's seats as documented: registered agents, keys, and built-in seats.
    expect(episode.agents).toEqual(Object.fromEntries(trained.map(([id, e]) => [id, { kind: "policy", target: e.target }])));
    const assignment = played.assignments.get(episode.episodeId)!;
    expect(Object.fromEntries(Object.entries(assignment.agents).map(([id, a]) => [id, { model: a.model, role: a.role }]))).toEqual(
      Object.fromEntries(trained.map(([id, e]) => [id, { model: e.target, role: e.role }])),
    );
    expect(assignment.builtinAgents).toEqual(builtin);
    expect(episode.rewards).not.toBeNull();

    // Every recorded call is a trained agent's, under that agent's own policy; built-in seats never call.
    for (const c of calls) expect(expected.get(c.agentId)?.target).toBe(c.policy);
    for (const id of builtin) expect(calls.filter((c) => c.agentId === id)).toEqual([]);

    for (const [agentId, { role, target }] of trained) {
      const own = calls.filter((c) => c.agentId === agentId);
      expect(own.length).toBeGreaterThan(0);
      const live = own.filter((c) => c.finishReason !== "overflow" && c.outputIds.length > 0);
      // Exactly one unit, in exactly its own policy's pool (none when every call overflowed or was empty).
      for (const p of policies) {
        const units = played.pooled.get(p)!.filter((s) => s.episodeId === episode.episodeId && s.agentId === agentId);
        expect(units).toHaveLength(p === target && live.length > 0 ? 1 : 0);
      }
      const sample = played.pooled.get(target)!.find((s) => s.episodeId === episode.episodeId && s.agentId === agentId);
      if (!sample) continue;
      expect(sample.reward).toBe(episode.rewards![agentId]);
      expect(sample.policy).toBe(target);
      // The sample is this agent's own conversation: its own system prompt, no other seat's.
      const text = tokenizer.decode(sample.tokenIds);
      expect(text).toContain(`You are ${agentId}. ${ROLE_NOTE[role]}`);
      expect([...text.matchAll(/You are (Player\d)\./g)].map((m) => m[1])).toEqual([agentId]);
      // Its generated tokens are exactly the outputs of its own calls, oldest first, ending with the newest merged one.
      const runs = generatedRuns(sample);
      expect(runs).toHaveLength(sample.calls);
      let next = 0;
      for (const run of runs) {
        const at = live.findIndex((c, i) => i >= next && c.outputIds.join() === run.ids.join() && c.outputLogprobs.join() === run.logprobs.join());
        expect(at).toBeGreaterThanOrEqual(next);
        next = at + 1;
      }
      const root = live[next - 1]!;
      expect(sample.tokenIds.slice(-(root.headerIds.length + root.outputIds.length))).toEqual([...root.headerIds, ...root.outputIds]);
    }
  }
  // No pool holds an agent that policy does not play, and no built-in seat appears anywhere.
  for (const p of policies) {
    expect(played.pooled.get(p)!.length).toBeGreaterThan(0);
    for (const s of played.pooled.get(p)!) {
      const { episode } = played.ended.find((e) => e.episode.episodeId === s.episodeId)!;
      expect(expectedTargets(tasks.get(episode.taskId)!, roles).get(s.agentId)?.target).toBe(p);
    }
  }
}

describe("werewolves through the real server: each policy's pool holds only its own agents' samples", () => {
  it("one shared werewolf policy and one village policy (seer, witch); everyone else built in", { timeout: 240_000 }, async () => {
    const policies = ["wolf", "village"];
    const roles = { werewolf: "wolf", seer: "village", witch: "village", "*": BUILTIN };
    checkPools(await playGames(policies, roles), policies, roles);
  });

  it("a separate policy per werewolf seat, in seat order (werewolf#1..#3); everyone else built in", { timeout: 240_000 }, async () => {
    const policies = ["wolf1", "wolf2", "wolf3"];
    const roles = { "werewolf#1": "wolf1", "werewolf#2": "wolf2", "werewolf#3": "wolf3", "*": BUILTIN };
    const played = await playGames(policies, roles);
    checkPools(played, policies, roles);
    // Seat order: wolf1 plays the werewolf in the lowest seat, wolf3 the one in the highest.
    for (const { episode } of played.ended) {
      const wolves = tasks.get(episode.taskId)!.agents!.filter((a) => a.role === "werewolf").map((a) => a.id);
      expect(wolves.map((id) => Number(id.slice("Player".length)))).toEqual([...wolves].map((id) => Number(id.slice("Player".length))).sort((a, b) => a - b));
      expect(wolves.map((id) => episode.agents[id]?.target)).toEqual(policies);
    }
  });
});
