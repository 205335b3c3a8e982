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

/** A progress sink that prints nothing (the events still reach metrics.jsonl and onEvent). */
export const quiet: ProgressSink = { event: () => undefined, fill: () => undefined, close: () => undefined };

/** Every event of a run directory's metrics.jsonl, in order. */
export function readEvents(runDir: string): RunEvent[] {
  return readMetrics(join(runDir, "metrics.jsonl")).events;
}
