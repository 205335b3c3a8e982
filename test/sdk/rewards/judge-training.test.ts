import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readEvents } from "../../hub/train/helpers.ts";
import { removeTempDirs, tempDir } from "../../hub/helpers.ts";
import { copyPlugin, judgeDoublePerFile, queryRunDb, trainOnPlugin } from "./helpers.ts";

let failing: string | null = null;
let failed = 0;
// Grades like a judge: the share of vowels in the reply, 0-10. The first prompt of task #3 fails three
// times (HTTP 500), which uses up its episode's judge retries: that episode must be retried, not scored 0.
const judge = judgeDoublePerFile((prompt) => {
  if (failing === null && prompt.includes("#3:")) failing = prompt;
  if (prompt === failing && failed < 3) {
    failed += 1;
    return { fail: "http-500" };
  }
  const reply = /Reply:\n([\s\S]*)\nGrade/.exec(prompt)?.[1] ?? "";
  const vowels = (reply.match(/[aeiou]/gi) ?? []).length;
  return `The reply has ${vowels} vowels.\nScore: ${Math.min(10, vowels * 2)}`;
});
afterAll(removeTempDirs);

describe("training with an LLM judge (real agentjet train, a judge-model double over HTTP)", () => {
  // Regression: with no endpoint the judge failed every episode, retried about 1,000 times before the run gave up.
  it("a judge with no endpoint (no baseUrl, no $AGENTJET_JUDGE_BASE_URL) is refused at the start", { timeout: 120_000 }, async () => {
    const cwd = tempDir("judge-train");
    const plugin = copyPlugin("judged", cwd);
    const r = await trainOnPlugin(cwd, { plugin, env: "judged", seed: 5, steps: 2, batchTasks: 2, groupSize: 2, maxTokens: 6, concurrency: 4 }, { AGENTJET_JUDGE_BASE_URL: "" }, 1);
    expect(r.stderr).toContain("judge 'judge' has no endpoint");
  });

  it("each episode is judged on its client, the verdict is recorded, and a judge that keeps failing retries the episode", { timeout: 240_000 }, async () => {
    const cwd = tempDir("judge-train");
    const plugin = copyPlugin("judged", cwd);
    await trainOnPlugin(
      cwd,
      { plugin, env: "judged", seed: 5, steps: 2, batchTasks: 8, groupSize: 4, maxTokens: 6, concurrency: 16 },
      { AGENTJET_JUDGE_BASE_URL: judge().baseUrl },
    );

    const ended = queryRunDb<{ task_id: string; rewards: string; metadata: string }>(cwd, "SELECT task_id, rewards, metadata FROM episodes WHERE state = 'ended'");
    const aborted = queryRunDb<{ task_id: string; abort_reason: string }>(cwd, "SELECT task_id, abort_reason FROM episodes WHERE state = 'aborted'");
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
    // ... and the run's log says why (agentjet train's local clients have no log of their own).
    const warnings = readEvents(join(cwd, "run")).flatMap((e) => (e.type === "log" && e.level === "warn" ? [e.message] : []));
    expect(warnings.some((m) => /^local clients: episode \S+ aborted \(reward-model: judge 'judge' \(judge-double\) gave no verdict in 3 tries: HTTP 500/.test(m))).toBe(true);
    const steps = readEvents(join(cwd, "run")).filter((e) => e.type === "step");
    expect(steps).toHaveLength(2);
    expect(judge().requests.every((q) => q.model === "judge-double")).toBe(true);
  });
});
