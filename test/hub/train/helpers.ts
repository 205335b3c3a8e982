import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
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

/** A progress sink that prints nothing (the events still reach metrics.jsonl and onEvent). */
export const quiet: ProgressSink = { event: () => undefined, fill: () => undefined, close: () => undefined };

/** Every event of a run directory's metrics.jsonl, in order. */
export function readEvents(runDir: string): RunEvent[] {
  return readFileSync(join(runDir, "metrics.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as RunEvent);
}

/** The real AIME 2024 problems in ../shared/data (see its README), wherever the checkout sits. */
export const AIME_DATA = [resolve(REPO, "../shared/data/aime-2024.jsonl"), "/work/shared/data/aime-2024.jsonl"].find((p) => existsSync(p));
