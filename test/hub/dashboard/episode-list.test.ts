import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { episodePageQuery, LATEST_FAILURES_SQL } from "../../../hub/dashboard/episode-query.ts";
import { TrainingService } from "../../../hub/run/service.ts";
import { openRunDb } from "../../../server/db/run-db.ts";
import { seedRunDb } from "../../helpers/seed-run-db.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";

const EPISODES = 100_000;
const project = tempDir("dash-100k");
const runDir = join(project, "run");
let service: TrainingService;
let seeded: ReturnType<typeof seedRunDb>;

beforeAll(async () => {
  seeded = seedRunDb(join(runDir, "run.db"), { episodes: EPISODES, abortEvery: 20, withCalls: 100 });
  // Offline, never started: the dashboard reads the run directory's run.db read-only.
  service = await TrainingService.listen({ host: "127.0.0.1", port: 0, projectDir: project, runDir, log: () => undefined });
}, 120_000);

afterAll(async () => {
  await service?.close();
  removeTempDirs();
});

async function get(path: string, token = service.tokens().adminToken!): Promise<{ status: number; json: any }> {
  const res = await fetch(`${service.origin()}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, json: await res.json() };
}

describe("the episode browser over 100,000 recorded episodes", () => {
  it("pages newest first with a cursor, without overlap, to the same rows as run.db in order", { timeout: 120_000 }, async () => {
    const first = await get("/v1/dashboard/episodes?limit=100");
    expect(first.status).toBe(200);
    expect(first.json.total).toBe(EPISODES);
    expect(first.json.episodes).toHaveLength(100);
    expect(first.json.episodes[0]).toMatchObject({ episodeId: "ep-0099999", calls: 1 });
    const seen: string[] = first.json.episodes.map((e: { episodeId: string }) => e.episodeId);
    let next: string | null = first.json.next;
    for (let p = 0; p < 5; p++) {
      const page = await get(`/v1/dashboard/episodes?limit=100&cursor=${next}`);
      expect(page.json.total).toBeNull();
      seen.push(...page.json.episodes.map((e: { episodeId: string }) => e.episodeId));
      next = page.json.next;
    }
    const expected = Array.from({ length: 600 }, (_, i) => `ep-${String(EPISODES - 1 - i).padStart(7, "0")}`);
    expect(seen).toEqual(expected);
  });

  it("filters by environment, state, failure kind, task and reward, and walks to the last page", { timeout: 120_000 }, async () => {
    const aborted = await get("/v1/dashboard/episodes?state=aborted&limit=500");
    expect(aborted.json.total).toBe(seeded.aborted);
    const crashes = await get("/v1/dashboard/episodes?failure=crash&env=arith&limit=10");
    expect(crashes.json.episodes.every((e: any) => e.failure.kind === "crash" && e.env === "arith")).toBe(true);
    expect(crashes.json.total).toBeGreaterThan(0);
    const good = await get("/v1/dashboard/episodes?minReward=0.9&task=task-49&limit=50");
    expect(good.json.episodes.length).toBeGreaterThan(0);
    expect(good.json.episodes.every((e: any) => e.reward >= 0.9 && e.taskId.includes("task-49"))).toBe(true);
    let walked = 0;
    let cursor: string | null = null;
    for (;;) {
      const page: { json: { episodes: unknown[]; next: string | null } } = await get(`/v1/dashboard/episodes?state=aborted&limit=500${cursor ? `&cursor=${cursor}` : ""}`);
      walked += page.json.episodes.length;
      cursor = page.json.next;
      if (cursor === null) break;
    }
    expect(walked).toBe(seeded.aborted);
  });

  it("reads no table whole for a page: the newest-first order comes from an index, never a sort", () => {
    const db = openRunDb(join(runDir, "run.db"));
    try {
      for (const filter of [{}, { env: "arith" }, { state: "aborted" as const, failure: "crash" }, { state: "ended" as const, minReward: 0.5 }]) {
        const q = episodePageQuery(filter, undefined, 50);
        const plan = (db.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.pageArgs) as Array<{ detail: string }>).map((r) => r.detail).join("\n");
        expect(plan, JSON.stringify(filter)).toContain("episodes_by_created");
        expect(plan, JSON.stringify(filter)).not.toContain("TEMP B-TREE");
      }
    } finally {
      db.close();
    }
  });

  it("finds the latest failures walking an index newest first, not sorting every aborted episode", () => {
    const db = openRunDb(join(runDir, "run.db"));
    try {
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${LATEST_FAILURES_SQL}`).all(20) as Array<{ detail: string }>).map((r) => r.detail).join("\n");
      expect(plan).toContain("episodes_by_state_time");
    } finally {
      db.close();
    }
  });

  it("lists the latest failures with the sandbox's stderr tail split out, and refuses a forged cursor and a client token", async () => {
    const { json } = await get("/v1/dashboard/failures");
    expect(json.failures).toHaveLength(20);
    expect(json.failures[0]).toMatchObject({ state: "aborted", stderrTail: expect.stringMatching(/^Traceback line \d+$/) });
    expect(json.failures[0].failure.message).not.toContain("stderr");
    const bad = await get("/v1/dashboard/episodes?cursor=bm90LWEtY3Vyc29y");
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe("AJ_ERR_INVALID_REQUEST");
    expect((await get("/v1/dashboard/episodes", service.tokens().clientTokens[0]!)).status).toBe(403);
    const one = await get("/v1/dashboard/episodes/ep-0099999");
    expect(one.json.calls).toHaveLength(1);
    expect(one.json.calls[0].output.map((t: { id: number }) => t.id)).toEqual([8, 9]);
    expect((await get("/v1/dashboard/episodes/nope")).json.error.code).toBe("AJ_ERR_EPISODE_NOT_FOUND");
  });
});
