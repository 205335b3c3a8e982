import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { PrepareContext } from "../../../sdk/env/prepare.ts";
import { DATA_HELP } from "./config.ts";
import { AppWorldDataError } from "./errors.ts";
import { readTaskOptions } from "./task-options.ts";

export const SPLITS = ["train", "dev", "test_normal", "test_challenge"] as const;
/** Where the task lists go in the installed store (the manifest's `{ external }` splits). */
export const TASKS_DIR = "appworld-tasks";

/** The data folder itself, or the AppWorld root above it. */
export function locateDataDir(given: string): string {
  const dir = resolve(given);
  if (existsSync(join(dir, "datasets"))) return dir;
  if (existsSync(join(dir, "data", "datasets"))) return join(dir, "data");
  throw new AppWorldDataError(`${dir} is not an AppWorld data folder (no datasets/ in it or in data/). ${DATA_HELP}`);
}

/**
 * `agentjet env add appworld --data <dir>`: reads the split files (`datasets/<split>.txt`, one task id a
 * line) of the user's AppWorld data and writes them as task lists; `--option maxSteps=N`,
 * `--option reward=binary|partial|agentjet` and `--option executionTimeoutS=N` go into every task.
 * The data itself is never copied: the container reads it from the `data` mount.
 */
export async function prepare(ctx: PrepareContext): Promise<void> {
  const given = ctx.options["data"];
  if (typeof given !== "string") throw new AppWorldDataError(`AppWorld needs your data folder: --data <dir>. ${DATA_HELP}`);
  const dataDir = locateDataDir(given);
  const { data: _data, ...rest } = ctx.options;
  const options = readTaskOptions(rest);
  await mkdir(join(ctx.outDir, TASKS_DIR), { recursive: true });
  for (const split of SPLITS) {
    const file = join(dataDir, "datasets", `${split}.txt`);
    const ids = existsSync(file) ? (await readFile(file, "utf8")).split("\n").map((l) => l.trim()).filter(Boolean) : [];
    if (!existsSync(file)) ctx.log(`no ${file}: split ${split} is empty`);
    const lines = ids.map((id) => JSON.stringify({ id, split, data: options }));
    await writeFile(join(ctx.outDir, TASKS_DIR, `${split}.jsonl`), lines.length ? `${lines.join("\n")}\n` : "");
    ctx.log(`${split}: ${ids.length} task(s)`);
  }
}
