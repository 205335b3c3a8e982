import { mkdir, writeFile } from "node:fs/promises";
import { basename, extname, join } from "node:path";
import type { Task } from "../../../sdk/env/protocol.ts";
import type { PrepareContext } from "../../../sdk/env/prepare.ts";
import { DEFAULT_SOURCES, downloadRows } from "./download.ts";
import { AimeDataError } from "./errors.ts";
import { type FieldMapping, mapRecords } from "./map-records.ts";
import { type DataFormat, readRecords } from "./read-records.ts";

/**
 * Writes `data/train.jsonl` and `data/test.jsonl` under `ctx.outDir`.
 * Options: `data` (a JSONL, JSON or parquet file; both splits when `testData` is absent, else train),
 * `testData` (a file for the test split), `format` (jsonl|json|parquet; default from the extension),
 * `problemField` (default `problem`), `answerField` (default `answer`), `idField` (default `id`).
 * With no `data` and `ctx.online`, downloads AIME 2024 and 2025 from the Hugging Face Hub.
 */
export async function prepare(ctx: PrepareContext): Promise<void> {
  const opt = (k: string): string | undefined => (typeof ctx.options[k] === "string" ? (ctx.options[k] as string) : undefined);
  const format = opt("format") as DataFormat | undefined;
  if (format !== undefined && !["jsonl", "json", "parquet"].includes(format)) throw new AimeDataError(`unknown format "${format}"`);
  const byPosition = (idPrefix: string): FieldMapping => ({
    problem: opt("problemField") ?? "problem",
    answer: opt("answerField") ?? "answer",
    idPrefix,
  });
  const fields = (idPrefix: string): FieldMapping => ({ ...byPosition(idPrefix), id: opt("idField") ?? "id" });
  const fromFile = async (path: string, split: string): Promise<Task[]> => {
    const tasks = mapRecords(await readRecords(path, format), fields(basename(path, extname(path))), split);
    ctx.log(`aime: ${tasks.length} tasks from ${path} -> ${split}`);
    return tasks;
  };

  const data = opt("data");
  const testData = opt("testData");
  let train: Task[];
  let test: Task[];
  if (data !== undefined) {
    train = await fromFile(data, "train");
    test = testData === undefined ? train.map((t) => ({ ...t, split: "test" })) : await fromFile(testData, "test");
  } else if (ctx.online) {
    const all: Task[] = [];
    for (const source of DEFAULT_SOURCES) {
      const rows = await downloadRows(source);
      const prefix = source.dataset.split("/").at(-1) ?? source.dataset;
      // Numbered by position: the two sources' own id fields differ and would collide.
      all.push(...mapRecords(rows, byPosition(`aime-${prefix}`), "test"));
      ctx.log(`aime: ${rows.length} tasks downloaded from ${source.dataset}`);
    }
    test = all;
    train = all.map((t) => ({ ...t, split: "train" }));
  } else {
    throw new AimeDataError("aime ships no problems: pass --data <file.jsonl|.json|.parquet>, or install online");
  }
  await mkdir(join(ctx.outDir, "data"), { recursive: true });
  await writeFile(join(ctx.outDir, "data", "train.jsonl"), toJsonl(train));
  await writeFile(join(ctx.outDir, "data", "test.jsonl"), toJsonl(test));
}

function toJsonl(tasks: readonly Task[]): string {
  return tasks.map((t) => JSON.stringify(t)).join("\n") + "\n";
}
