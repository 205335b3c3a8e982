import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openEnvironment } from "../../plugins/index.ts";
import type { EnvironmentRuntime } from "../../plugins/runtime.ts";
import { prepare } from "../../environments/aime/prepare/index.ts";
import { ManifestSchema } from "../../sdk/env/manifest.ts";
import type { Task, Turn } from "../../sdk/env/protocol.ts";

const ENVS = new URL("../../environments/", import.meta.url).pathname;
const AIME_2025 = new URL("../../../shared/data/aime-2025.jsonl", import.meta.url).pathname;

type Msg = { role: "system" | "user" | "assistant"; content: string };

/** One episode through the isolate runtime, every trained seat played by the plugin's own `solve` (which needs a second instance). */
async function playSolved(rt: EnvironmentRuntime, task: Task, builtinAgents: string[], seed = 3): Promise<Turn> {
  const s = await rt.openEpisode();
  if (s.kind !== "ok") throw new Error(s.failure.message);
  const convos: Record<string, Msg[]> = {};
  try {
    let turn = await s.value.reset({ task, seed, builtinAgents });
    for (let i = 0; i < 30; i++) {
      if (turn.kind !== "ok") throw new Error(turn.failure.message);
      if (turn.value.done) return turn.value;
      const actions: Record<string, string> = {};
      for (const [agent, obs] of Object.entries(turn.value.observations)) {
        const convo = (convos[agent] ??= []);
        convo.push(...obs.messages);
        const reply = await rt.solve({ task, agent, messages: convo });
        if (reply.kind !== "ok") throw new Error(reply.failure.message);
        convo.push({ role: "assistant", content: reply.value });
        actions[agent] = reply.value;
      }
      turn = await s.value.step({ actions });
    }
    throw new Error("episode did not end");
  } finally {
    await s.value.close();
  }
}

const CASES = [
  { name: "arith", split: "test", builtin: [] as string[], top: { solver: 1 } },
  { name: "countdown", split: "test-hard", builtin: [], top: { solver: 1 } },
  { name: "guess-number", split: "test-wide", builtin: [], top: { guesser: 1 } },
  { name: "aime", split: "test", builtin: [], top: { solver: 1 } },
];

describe("the built-in environments, bundled into isolated-vm", () => {
  const runtimes = new Map<string, EnvironmentRuntime>();
  let dataDir = "";

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "aj-envs-"));
    await prepare({ pluginDir: dataDir, outDir: dataDir, options: { data: AIME_2025 }, online: false, log: () => {} });
    for (const name of ["arith", "countdown", "guess-number", "tictactoe", "aime"]) {
      const dir = join(ENVS, name);
      const manifest = ManifestSchema.parse(JSON.parse(readFileSync(join(dir, "agentjet.env.json"), "utf8")));
      runtimes.set(name, await openEnvironment({ dir, manifest, dataDir, maxInstances: 2, warm: 0 }));
    }
  });

  afterAll(async () => {
    for (const rt of runtimes.values()) await rt.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it.each(CASES)("$name: the reference agent scores the top reward in the isolate", async ({ name, split, builtin, top }) => {
    const rt = runtimes.get(name)!;
    const tasks = (await rt.listTasks(split, { seed: 1 })).slice(0, 5);
    expect(tasks.length).toBe(5);
    for (const task of tasks) expect((await playSolved(rt, task, builtin)).rewards).toEqual(top);
  });

  it("generated splits are the same in the isolate as in process, for a seed", async () => {
    const { environment } = await import("../../environments/countdown/src/index.ts");
    const r = await runtimes.get("countdown")!.generateTasks({ split: "train", seed: 42, count: 20 });
    expect(r).toEqual({ kind: "ok", value: environment.generateTasks!({ split: "train", seed: 42, count: 20 }) });
  });

  it("tictactoe: the rule-based opponent plays o inside the isolate", async () => {
    const rt = runtimes.get("tictactoe")!;
    const task = { id: "empty", split: "test", data: { moves: [] } };
    const end = await playSolved(rt, task, ["o"], 11);
    expect(end.done).toBe(true);
    expect(end.rewards!["x"]).toBeGreaterThanOrEqual(0.5);
  });

  it("aime: the CAS (math mode) runs in the isolate", async () => {
    const rt = runtimes.get("aime")!;
    // The floor function is not the verifier's own reader's: this comparison reaches the CAS.
    const task = { id: "m", split: "test", data: { problem: "Floor of 7.5?", answer: "\\lfloor 7.5 \\rfloor", mode: "math" } };
    const s = await rt.openEpisode();
    if (s.kind !== "ok") throw new Error(s.failure.message);
    await s.value.reset({ task, seed: 1, builtinAgents: [] });
    const t = await s.value.step({ actions: { solver: "\\boxed{7}" } });
    await s.value.close();
    expect(t).toMatchObject({ kind: "ok", value: { done: true, rewards: { solver: 1 } } });
  });
});
