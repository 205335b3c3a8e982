import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { prepare } from "../environments/aime/prepare/index.ts";
import { verifyAnswer } from "../environments/aime/src/verify.ts";
import { type EnvironmentRuntime, openEnvironment } from "../plugins/index.ts";
import { ManifestSchema } from "../sdk/env/schemas.ts";
import type { Task } from "../sdk/env/index.ts";
import type { Assignment } from "../sdk/swarm/protocol.ts";
import { runEpisode, type Workflow } from "../sdk/swarm/index.ts";
import { type Bench, type BenchTable, fmt } from "./harness.ts";

/**
 * Single-turn AIME episodes per second through the client path (`runEpisode`: open an instance, reset,
 * the workflow's one step, end, hand the instance back) against the verifier alone in process, in one
 * run. Before: one episode per instance, every call its own message. Now: instances serve many episodes
 * at once (`episodesPerInstance`), their calls batched into one message per instance. Target: >= 5,000
 * episodes/s on 2 cores. The model's reply is a fixed ~1.5 KB response (no LLM, no server).
 */

const AIME_DIR = new URL("../environments/aime/", import.meta.url).pathname;
const DATA = new URL("../../shared/data/aime-2024.jsonl", import.meta.url).pathname;
const TARGET = 5_000;
const REASONING = "Let us compute step by step. We have $x^2 + y^2 = 25$ and so $xy = 12$. ".repeat(20);

function assignment(task: Task, n: number): Assignment {
  return {
    episodeId: `e${n}`,
    env: { name: "aime", version: "0" },
    task,
    seed: n,
    agents: { solver: { baseUrl: "http://127.0.0.1:1/v1", apiKey: "bench", model: "bench", role: "solver" } },
    builtinAgents: [],
    maxTurns: 1,
    purpose: "train",
    attempt: 0,
  };
}

/** The single-turn workflow with the model's reply fixed: reset, one step, end with the rewards. */
function workflow(response: string): Workflow {
  return async (ep) => {
    const r = await ep.env.reset();
    if (r.kind === "failed") return ep.abort(r.failure);
    const s = await ep.env.step({ solver: response });
    if (s.kind === "failed") return ep.abort(s.failure);
    ep.end(s.value.rewards ?? {});
  };
}

/** Episodes per second with `inFlight` episodes running at once for `seconds`. */
async function measure(rt: EnvironmentRuntime, tasks: Task[], inFlight: number, seconds: number): Promise<number> {
  const signal = new AbortController().signal;
  const wf = workflow(`${REASONING}\nTherefore the answer is $\\boxed{204}$.`);
  let n = 0;
  let aborted = 0;
  const worker = async (until: number) => {
    while (performance.now() < until) {
      const i = n++;
      const r = await runEpisode({ assignment: assignment(tasks[i % tasks.length]!, i), runtime: rt, signal, workflow: () => wf, agreeSync: () => {} });
      if (r.type === "abort") aborted++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, () => worker(performance.now() + 200)));
  n = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inFlight }, () => worker(t0 + seconds * 1000)));
  if (aborted > 0) throw new Error(`${aborted} episodes aborted`);
  return n / ((performance.now() - t0) / 1000);
}

export const bench: Bench = {
  name: "episode-path",
  async run({ quick, log }) {
    const seconds = quick ? 0.5 : 3;
    const dataDir = await mkdtemp(join(tmpdir(), "aj-episode-path-"));
    try {
      await prepare({ pluginDir: dataDir, outDir: dataDir, options: { data: DATA }, online: false, log: () => {} });
      const manifest = ManifestSchema.parse(JSON.parse(readFileSync(join(AIME_DIR, "agentjet.env.json"), "utf8")));

      log("verifier in process");
      const response = `${REASONING}\nTherefore the answer is $\\boxed{204}$.`;
      let k = 0;
      const t0 = performance.now();
      while (performance.now() - t0 < seconds * 1000) {
        verifyAnswer("204", response);
        k++;
      }
      const inProcess = k / ((performance.now() - t0) / 1000);

      const configs = [
        { name: "before: 1 episode per instance, 2 instances, 2 in flight", perInstance: 1, maxInstances: 2, inFlight: 2 },
        { name: "before: 1 episode per instance, 8 instances, 8 in flight", perInstance: 1, maxInstances: 8, inFlight: 8 },
        { name: "now: 32 episodes per instance (batched), 64 in flight", perInstance: 32, maxInstances: 64, inFlight: 64 },
        { name: "now: 128 episodes per instance (batched), 256 in flight", perInstance: 128, maxInstances: 256, inFlight: 256 },
      ];
      const rows: Array<Array<string | number>> = [["verifier only, in process (1 thread)", fmt(inProcess), "1.00"]];
      let best = 0;
      let before = 0;
      for (const c of configs) {
        log(c.name);
        const rt = await openEnvironment({ dir: AIME_DIR, manifest, dataDir, maxInstances: c.maxInstances, warm: c.maxInstances, episodesPerInstance: c.perInstance });
        try {
          const tasks = await rt.listTasks("test");
          const rate = await measure(rt, tasks, c.inFlight, seconds);
          if (c.perInstance === 1) before = Math.max(before, rate);
          else best = Math.max(best, rate);
          rows.push([c.name, fmt(rate), fmt(rate / inProcess)]);
        } finally {
          await rt.close();
        }
      }
      const table: BenchTable = {
        title: `Single-turn AIME episodes per second through the client path (runEpisode + isolate pool), ${availableParallelism()} cores visible`,
        columns: ["path", "episodes/s", "vs verifier in process"],
        rows,
        notes: [
          `Target >= ${TARGET}/s on 2 cores: ${best >= TARGET ? "met" : "missed"} (${fmt(best)}/s now, ${fmt(before)}/s before: ${fmt(best / before)}x).`,
          "Each episode: open an instance (a lane), reset, one step with a fixed ~1.5 KB response, close; batched calls share one message per instance and a group's task is sent once per batch.",
          `Load average when measured: ${loadavg().map((x) => x.toFixed(1)).join(", ")} on ${availableParallelism()} cores (shared with other work; absolute numbers scale with it).`,
        ],
      };
      return [table];
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  },
};
