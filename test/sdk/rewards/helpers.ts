import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, expect } from "vitest";
import { type JudgeDouble, startJudgeDouble } from "../../helpers/judge-double.ts";
import { type CliResult, runCli } from "../../hub/helpers.ts";

const FIXTURES = join(import.meta.dirname, "fixtures");

/**
 * Copies the plugin fixtures/<name> into `cwd` and returns its folder. `src`: take the code from another
 * fixture (one environment's code under several manifests).
 */
export function copyPlugin(name: string, cwd: string, o: { src?: string } = {}): string {
  const dir = join(cwd, name);
  cpSync(join(FIXTURES, name), dir, { recursive: true });
  if (o.src) cpSync(join(FIXTURES, o.src, "src"), join(dir, "src"), { recursive: true });
  return dir;
}

export interface TrainRun {
  /** The plugin folder (a development version: environments[].path). */
  plugin: string;
  /** Its manifest name; its one seat is `speaker`. */
  env: string;
  seed: number;
  steps: number;
  batchTasks: number;
  groupSize: number;
  maxTokens: number;
  concurrency: number;
  lr?: number;
}

/**
 * Writes run.yaml (a one-layer embedded policy on the plugin) in `cwd` and runs the real
 * `agentjet train run.yaml --port 0 --json` there, as a child process; its run directory is `cwd/run`.
 * Fails the test (showing the end of its stderr) unless the run exits `exitCode` (0).
 */
export async function trainOnPlugin(cwd: string, r: TrainRun, env: Record<string, string> = {}, exitCode = 0): Promise<CliResult> {
  writeFileSync(
    join(cwd, "run.yaml"),
    `run: { dir: run, seed: ${r.seed}, steps: ${r.steps}, checkpointEvery: 100 }
policies:
  main:
    tokenizer: embedded
    engine: { kind: embedded, model: { layers: 1, dim: 32, heads: 4, context: 64, seed: ${r.seed} } }
${r.lr === undefined ? "" : `    optimizer: { lr: ${r.lr}, epochs: 1 }\n`}environments:
  - { name: ${r.env}, path: ${JSON.stringify(r.plugin)}, roles: { speaker: main } }
sampling: { temperature: 1, maxTokens: ${r.maxTokens} }
batching: { strategy: tasks, batchTasks: ${r.batchTasks}, groupSize: ${r.groupSize} }
clients: { local: 1, concurrency: ${r.concurrency} }
`,
  );
  const result = await runCli(["train", "run.yaml", "--port", "0", "--json"], cwd, undefined, env);
  expect(result.code, result.stderr.slice(-3000)).toBe(exitCode);
  return result;
}

/** A judge-model double for the calling file's tests, answering with `grade`: started before them, closed after them. */
export function judgeDoublePerFile(grade: Parameters<typeof startJudgeDouble>[0]): () => JudgeDouble {
  let judge: JudgeDouble | undefined;
  beforeAll(async () => {
    judge = await startJudgeDouble(grade);
  });
  afterAll(() => judge?.close());
  return () => judge!;
}

/** Rows of the run's run.db (read-only). */
export function queryRunDb<T>(cwd: string, sql: string): T[] {
  const db = new Database(join(cwd, "run", "run.db"), { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}
