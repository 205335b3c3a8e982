import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEvents } from "../../hub/train/helpers.ts";
import { removeTempDirs, runCli, tempDir } from "../../hub/helpers.ts";
import { type JudgeDouble, startJudgeDouble } from "../../helpers/judge-double.ts";

let judge: JudgeDouble;
let failing: string | null = null;
let failed = 0;
beforeAll(async () => {
  // Grades like a judge: the share of vowels in the reply, 0-10. The first prompt of task #3 fails three
  // times (HTTP 500), which uses up its episode's judge retries: that episode must be retried, not scored 0.
  judge = await startJudgeDouble((prompt) => {
    if (failing === null && prompt.includes("#3:")) failing = prompt;
    if (prompt === failing && failed < 3) {
      failed += 1;
      return { fail: "http-500" };
    }
    const reply = /Reply:\n([\s\S]*)\nGrade/.exec(prompt)?.[1] ?? "";
    const vowels = (reply.match(/[aeiou]/gi) ?? []).length;
    return `The reply has ${vowels} vowels.\nScore: ${Math.min(10, vowels * 2)}`;
  });
});
afterAll(async () => {
  await judge.close();
  removeTempDirs();
});

describe("training with an LLM judge (real agentjet train, a judge-model double over HTTP)", () => {
  it("each episode is judged on its client, the verdict is recorded, and a judge that keeps failing retries the episode", { timeout: 240_000 }, async () => {
    const cwd = tempDir("judge-train");
    const plugin = join(cwd, "judged");
    cpSync(join(import.meta.dirname, "fixtures", "judged"), plugin, { recursive: true });
    writeFileSync(
      join(cwd, "run.yaml"),
      `run: { dir: run, seed: 5, steps: 2, checkpointEvery: 100 }
policies:
  main:
    tokenizer: embedded
    engine: { kind: embedded, model: { layers: 1, dim: 32, heads: 4, context: 64, seed: 5 } }
environments:
  - { name: judged, path: ${JSON.stringify(plugin)}, roles: { speaker: main } }
sampling: { temperature: 1, maxTokens: 6 }
batching: { strategy: tasks, batchTasks: 8, groupSize: 4 }
clients: { local: 1, concurrency: 16 }
`,
    );
    const r = await runCli(["train", "run.yaml", "--port", "0", "--json"], cwd, undefined, { AGENTJET_JUDGE_BASE_URL: judge.baseUrl });
    expect(r.code, r.stderr.slice(-3000)).toBe(0);

    const db = new Database(join(cwd, "run", "run.db"), { readonly: true });
    const ended = db.prepare("SELECT task_id, rewards, metadata FROM episodes WHERE state = 'ended'").all() as Array<{ task_id: string; rewards: string; metadata: string }>;
    const aborted = db.prepare("SELECT task_id, abort_reason FROM episodes WHERE state = 'aborted'").all() as Array<{ task_id: string; abort_reason: string }>;
    db.close();
    for (const row of ended) {
      const parts = (JSON.parse(row.metadata) as { rewardParts: Record<string, { values: Record<string, number>; verdicts: Record<string, string> }> }).rewardParts.speaker!;
      const verdict = parts.verdicts.judge!;
      const score = Number(/Score: (\d+)/.exec(verdict)![1]);
      expect(parts.values.judge).toBeCloseTo(score / 10, 9);
      expect(JSON.parse(row.rewards).speaker).toBeCloseTo(score / 10, 9);
    }
    // Task 3's first episode ran out of judge retries: aborted as reward-model, retried, and its retry was judged.
    const judgeFailures = aborted.filter((a) => (JSON.parse(a.abort_reason) as { kind: string }).kind === "reward-model");
    expect(ended.some((e) => e.task_id === "train-3")).toBe(true); // a batch of 8 tasks draws all 8
    expect(judgeFailures.length).toBeGreaterThanOrEqual(1);
    expect(judgeFailures.every((a) => a.task_id === "train-3")).toBe(true);
    const steps = readEvents(join(cwd, "run")).filter((e) => e.type === "step");
    expect(steps).toHaveLength(2);
    expect(judge.requests.every((q) => q.model === "judge-double")).toBe(true);
  });
});
