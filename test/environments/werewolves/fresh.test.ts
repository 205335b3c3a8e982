import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { playEpisode } from "../../../hub/conformance/play-episode.ts";
import { readManifest } from "../../../hub/store/index.ts";
import { bundleVmPlugin, type EnvironmentRuntime, openEnvironment } from "../../../plugins/index.ts";
import { PLAYERS } from "../../../environments/werewolves/src/roles.ts";

const PLUGIN = join(import.meta.dirname, "../../../environments/werewolves");

describe("werewolves in its sandbox: fresh observations restart the seat's conversation", () => {
  let tmp: string;
  let runtime: EnvironmentRuntime;
  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), "aj-werewolves-fresh-"));
    const manifest = readManifest(PLUGIN);
    const bundlePath = join(tmp, "bundle.js");
    await bundleVmPlugin(PLUGIN, manifest, bundlePath);
    runtime = await openEnvironment({ dir: PLUGIN, manifest, bundlePath, maxInstances: 1, warm: 0 });
  }, 60_000);
  afterAll(async () => {
    await runtime?.close();
    await rm(tmp, { recursive: true, force: true });
  });

  async function historyLengths(split: string): Promise<number[]> {
    const [task] = await runtime.listTasks(split);
    const wolves = task!.agents!.filter((a) => a.role === "werewolf").map((a) => a.id);
    const lengths: number[] = [];
    const result = await playEpisode({
      runtime,
      task: task!,
      seed: 1,
      builtinAgents: PLAYERS.filter((p) => !wolves.includes(p)),
      maxSteps: 500,
      act: async (_agent, _task, history, format) => {
        lengths.push(history.length);
        const names = Object.values((format?.schema as { properties: Record<string, { enum?: string[] }> }).properties).flatMap((v) => v.enum ?? []);
        const q = history.at(-1)!.content;
        if (/Agree\?|talk: kill/.test(q) || q.includes('"reach_agreement"')) return JSON.stringify({ kill: names[0], reach_agreement: true });
        if (q.includes("ccuse")) return JSON.stringify({ accuse: null });
        return JSON.stringify({ vote: names[0] });
      },
    });
    expect(result.kind).toBe("done");
    return lengths;
  }

  it("a compact game asks every decision over one message; the transcript game's conversations grow", { timeout: 60_000 }, async () => {
    const compact = await historyLengths("test-compact");
    expect(compact.length).toBeGreaterThan(5);
    expect(new Set(compact)).toEqual(new Set([1]));
    const transcript = await historyLengths("test");
    expect(Math.max(...transcript)).toBeGreaterThan(5);
  });
});
