import { join } from "node:path";
import { readMetrics } from "../../../hub/report/read-metrics.ts";
import { loadRunConfig } from "../../../server/config/load-run-config.ts";
import type { RunConfig } from "../../../server/config/run-config.ts";
import type { RunEvent } from "../../../hub/train/events.ts";
import type { ProgressSink } from "../../../hub/train/progress.ts";
import { REPO } from "../helpers.ts";

/** A shipped example config (examples/<name>.yaml), validated. */
export async function exampleConfig(name: string): Promise<RunConfig> {
  const loaded = await loadRunConfig(join(REPO, "examples", `${name}.yaml`));
  if (loaded.kind !== "ok") throw new Error(`examples/${name}.yaml does not load: ${JSON.stringify(loaded)}`);
  return loaded.config;
}

/** How `smallQuickstart` cuts the quickstart down; an option left out keeps the example's value. */
export interface QuickstartCut {
  steps: number;
  checkpointEvery: number;
  batchTasks: number;
  groupSize: number;
  concurrency?: number;
  filterEqualRewards?: boolean;
}

/** The quickstart cut to a few small RL steps, with no supervised warm-start and no evaluation. */
export async function smallQuickstart(cut: QuickstartCut): Promise<RunConfig> {
  const config = await exampleConfig("quickstart");
  delete config.warmStart;
  config.eval.every = 0;
  config.run.steps = cut.steps;
  config.run.checkpointEvery = cut.checkpointEvery;
  config.batching.batchTasks = cut.batchTasks;
  config.batching.groupSize = cut.groupSize;
  if (cut.concurrency !== undefined) config.clients.concurrency = cut.concurrency;
  if (cut.filterEqualRewards !== undefined) config.batching.filterEqualRewards = cut.filterEqualRewards;
  return config;
}

/**
 * The YAML of a tiny arith run for the CLI tests: `run` as given, one embedded policy `main` (1 layer,
 * width 16), replies of up to 3 sampled tokens, `tasks` batches of `batchTasks` x `groupSize` with no
 * equal-reward filter; `rest` adds the other top-level fields (clients, eval, ...) as YAML lines.
 */
export function tinyArithYaml(o: { run: string; modelSeed: number; lr: number; batchTasks: number; groupSize: number; rest: string }): string {
  return `run: ${o.run}
policies:
  main:
    tokenizer: embedded
    engine: { kind: embedded, model: { layers: 1, dim: 16, heads: 2, context: 64, seed: ${o.modelSeed} } }
    optimizer: { lr: ${o.lr} }
environments:
  - { name: arith, split: train, roles: { solver: main } }
sampling: { temperature: 1, maxTokens: 3 }
batching: { strategy: tasks, batchTasks: ${o.batchTasks}, groupSize: ${o.groupSize}, filterEqualRewards: false }
${o.rest}`;
}

/** A progress sink that prints nothing (the events still reach metrics.jsonl and onEvent). */
export const quiet: ProgressSink = { event: () => undefined, fill: () => undefined, close: () => undefined };

/** Every event of a run directory's metrics.jsonl, in order. */
export function readEvents(runDir: string): RunEvent[] {
  return readMetrics(join(runDir, "metrics.jsonl")).events;
}
