import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readEvents } from "../../hub/train/helpers.ts";
import { removeTempDirs, tempDir } from "../../hub/helpers.ts";
import { copyPlugin, judgeDoublePerFile, queryRunDb, trainOnPlugin } from "./helpers.ts";

const vowels = (s: string) => (s.match(/[aeiou]/gi) ?? []).length;

let malformedOnce = true;
// A group judge: ranks the trajectories by vowel count (ties: lower number first), best first. Its
// first answer is malformed (a ranking that names a trajectory twice), which it must retry.
const judge = judgeDoublePerFile((prompt) => {
  const parts = prompt.split("### Trajectory ").slice(1);
  if (malformedOnce) {
    malformedOnce = false;
    return `Ranking: ${JSON.stringify(parts.map(() => 1))}`;
  }
  const scored = parts.map((p) => {
    const n = Number(p.split("\n")[0]);
    return { n, v: vowels(p.slice(p.indexOf("\n") + 1)) };
  });
  scored.sort((a, b) => b.v - a.v || a.n - b.n);
  return `After comparing them:\n${JSON.stringify(scored.map((s) => s.n))}`;
});
afterAll(removeTempDirs);

describe("group-relative judging (real agentjet train, a judge-model double over HTTP)", () => {
  it("the judge ranks each GRPO group's n replies at once, and rank r of n earns (n - r) / (n - 1)", { timeout: 240_000 }, async () => {
    const cwd = tempDir("group-judge");
    const plugin = copyPlugin("ranked", cwd, { src: "judged" });
    await trainOnPlugin(
      cwd,
      { plugin, env: "ranked", seed: 7, steps: 2, batchTasks: 4, groupSize: 4, maxTokens: 8, concurrency: 16 },
      { AGENTJET_JUDGE_BASE_URL: judge().baseUrl },
    );
    expect(readEvents(join(cwd, "run")).filter((e) => e.type === "step")).toHaveLength(2);

    const rows = queryRunDb<{ episode_id: string; rewards: string; metadata: string; output_text: string }>(
      cwd,
      `SELECT e.episode_id, e.rewards, e.metadata, c.output_text FROM episodes e JOIN calls c ON c.episode_id = e.episode_id
         WHERE e.state = 'ended' ORDER BY e.episode_id`,
    );
    const groups = new Map<string, Array<{ id: string; reward: number; reply: string; verdict: string }>>();
    for (const row of rows) {
      const meta = JSON.parse(row.metadata) as { groupId: string; rewardParts: Record<string, { values: Record<string, number>; verdicts: Record<string, string> }> };
      const list = groups.get(meta.groupId) ?? [];
      list.push({ id: row.episode_id, reward: JSON.parse(row.rewards).speaker, reply: row.output_text, verdict: meta.rewardParts.speaker!.verdicts.rank! });
      expect(meta.rewardParts.speaker!.values.rank).toBe(JSON.parse(row.rewards).speaker);
      groups.set(meta.groupId, list);
    }
    expect(groups.size).toBeGreaterThanOrEqual(8); // 2 batches of 4 groups
    for (const [, eps] of groups) {
      expect(eps).toHaveLength(4);
      // The rewards are the ranks: a permutation of 1, 2/3, 1/3, 0 ...
      expect(eps.map((e) => e.reward).sort()).toEqual([0, 1 / 3, 2 / 3, 1].sort());
      // ... in the judge's order: more vowels never earns less.
      for (const a of eps) for (const b of eps) if (vowels(a.reply) > vowels(b.reply)) expect(a.reward).toBeGreaterThan(b.reward);
      expect(eps[0]!.verdict).toMatch(/^After comparing them:\n\[/);
    }
  });

  it("a weight update does not wait for episodes held for their group's judge (fewer client slots than a batch)", { timeout: 240_000 }, async () => {
    // 4 client slots, batches of 2 groups of 3: a sync starts while a group has members held (ended on
    // the client, waiting for the judge) and members not yet claimed, which cannot start while claims
    // are paused. Its drain waited for the held ones until server.syncTimeoutS (60 s), then abandoned them.
    const cwd = tempDir("group-judge-sync");
    const plugin = copyPlugin("ranked", cwd, { src: "judged" });
    const started = Date.now();
    await trainOnPlugin(
      cwd,
      { plugin, env: "ranked", seed: 1, steps: 4, batchTasks: 2, groupSize: 3, maxTokens: 8, concurrency: 4 },
      { AGENTJET_JUDGE_BASE_URL: judge().baseUrl },
    );
    expect(readEvents(join(cwd, "run")).filter((e) => e.type === "step")).toHaveLength(4);
    const abandoned = queryRunDb<{ n: number }>(cwd, `SELECT COUNT(*) AS n FROM episodes WHERE abort_reason LIKE '%"abandoned"%'`);
    expect(abandoned[0]!.n).toBe(0);
    expect(Date.now() - started).toBeLessThan(45_000);
  });
});
