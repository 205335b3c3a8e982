import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import { asyncBufferFromFile, parquetReadObjects } from "hyparquet";
import { AimeDataError } from "./errors.ts";

export type DataFormat = "jsonl" | "json" | "parquet";

/** Reads a dataset file into plain records. The format comes from `format`, else the file extension. */
export async function readRecords(path: string, format?: DataFormat): Promise<Record<string, unknown>[]> {
  const fmt = format ?? detectFormat(path);
  try {
    if (fmt === "parquet") return (await parquetReadObjects({ file: await asyncBufferFromFile(path) })) as Record<string, unknown>[];
    const text = await readFile(path, "utf8");
    if (fmt === "json") return asRecords(JSON.parse(text), path);
    return text
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line, i) => {
        const v: unknown = JSON.parse(line);
        if (typeof v !== "object" || v === null || Array.isArray(v)) throw new AimeDataError(`${path}:${i + 1}: not a JSON object`);
        return v as Record<string, unknown>;
      });
  } catch (err) {
    if (err instanceof AimeDataError) throw err;
    throw new AimeDataError(`cannot read ${path} as ${fmt}: ${(err as Error).message}`, { cause: err });
  }
}

function detectFormat(path: string): DataFormat {
  const ext = extname(path).toLowerCase();
  if (ext === ".parquet") return "parquet";
  if (ext === ".json") return "json";
  return "jsonl";
}

/** A JSON file holds an array of records, or an object with one array field (`{ "data": [...] }`). */
function asRecords(v: unknown, path: string): Record<string, unknown>[] {
  const arr = Array.isArray(v) ? v : typeof v === "object" && v !== null ? Object.values(v).find(Array.isArray) : undefined;
  if (arr === undefined) throw new AimeDataError(`${path}: expected an array of records`);
  return arr.filter((r): r is Record<string, unknown> => typeof r === "object" && r !== null && !Array.isArray(r));
}
