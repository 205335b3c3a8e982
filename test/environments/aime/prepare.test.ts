import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parquetWriteFile } from "hyparquet-writer";
import { afterEach, describe, expect, it } from "vitest";
import { downloadRows } from "../../../environments/aime/prepare/download.ts";
import { prepare } from "../../../environments/aime/prepare/index.ts";
import type { Task } from "../../../sdk/env/protocol.ts";

const AIME_2024 = new URL("../../../../shared/data/aime-2024.jsonl", import.meta.url).pathname;
const dirs: string[] = [];

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "aj-aime-"));
  dirs.push(d);
  return d;
}

afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function run(options: Record<string, unknown>, online = false): Promise<{ train: Task[]; test: Task[] }> {
  const outDir = tempDir();
  await prepare({ pluginDir: outDir, outDir, options, online, log: () => {} });
  const read = (f: string): Task[] =>
    readFileSync(join(outDir, "data", f), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Task);
  return { train: read("train.jsonl"), test: read("test.jsonl") };
}

describe("aime prepare", () => {
  it("reads the real JSONL into both splits, ids and answers kept", async () => {
    const { train, test } = await run({ data: AIME_2024 });
    expect(train).toHaveLength(30);
    expect(test).toHaveLength(30);
    expect(train[0]).toMatchObject({ id: "2024-I-1", split: "train", data: { answer: "204" } });
    expect(test[0]!.split).toBe("test");
  });

  it("maps fields of a JSON file and numbers tasks without ids", async () => {
    const dir = tempDir();
    const path = join(dir, "mine.json");
    writeFileSync(path, JSON.stringify({ rows: [{ question: "1+1?", final: 2 }, { question: "2+2?", final: "4" }] }));
    const { train } = await run({ data: path, problemField: "question", answerField: "final" });
    expect(train).toEqual([
      { id: "mine-1", split: "train", data: { problem: "1+1?", answer: "2" } },
      { id: "mine-2", split: "train", data: { problem: "2+2?", answer: "4" } },
    ]);
  });

  it("reads parquet (hyparquet) and a separate test file", async () => {
    const dir = tempDir();
    const path = join(dir, "train.parquet");
    parquetWriteFile({
      filename: path,
      columnData: [
        { name: "id", data: ["a", "b"], type: "STRING" },
        { name: "problem", data: ["p1", "p2"], type: "STRING" },
        { name: "answer", data: [7, 70], type: "INT32" },
      ],
    });
    const { train, test } = await run({ data: path, testData: AIME_2024 });
    expect(train.map((t) => [t.id, (t.data as { answer: string }).answer])).toEqual([["a", "7"], ["b", "70"]]);
    expect(test).toHaveLength(30);
  });

  it("fails with a coded error on a record without an answer, and offline without --data", async () => {
    const dir = tempDir();
    const path = join(dir, "bad.jsonl");
    writeFileSync(path, '{"problem":"p"}\n');
    await expect(run({ data: path })).rejects.toMatchObject({ code: "AJ_ERR_AIME_DATA" });
    await expect(run({})).rejects.toMatchObject({ code: "AJ_ERR_AIME_DATA" });
  });

  it("pages through the Hub rows API (a faithful double of its JSON shape)", async () => {
    const rows = Array.from({ length: 130 }, (_, i) => ({ row_idx: i, row: { problem: `p${i}`, answer: String(i) } }));
    const seen: string[] = [];
    const fakeFetch = (async (url: URL) => {
      seen.push(url.search);
      const offset = Number(url.searchParams.get("offset"));
      const length = Number(url.searchParams.get("length"));
      return new Response(JSON.stringify({ rows: rows.slice(offset, offset + length), num_rows_total: rows.length }));
    }) as unknown as typeof fetch;
    const got = await downloadRows({ dataset: "HuggingFaceH4/aime_2024", config: "default", split: "train" }, fakeFetch);
    expect(got).toHaveLength(130);
    expect(seen).toHaveLength(2);
    expect(seen[0]).toContain("dataset=HuggingFaceH4%2Faime_2024");
  });
});
