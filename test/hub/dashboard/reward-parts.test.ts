import { join } from "node:path";
import type { Browser } from "playwright-core";
import { CHROMIUM, openPage } from "../../helpers/chromium.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TrainingService } from "../../../hub/run/service.ts";
import { openRunDb } from "../../../server/db/run-db.ts";
import { seedRunDb } from "../../helpers/seed-run-db.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";


/** What a client records with an episode scored by an ONNX model and a judge (sdk/rewards/episode-rewarder.ts). */
const PARTS = { solver: { values: { env: 0, style: 0.731, judge: 0.8 }, verdicts: { judge: "The reply matches the reference.\nScore: 8" } } };

const project = tempDir("dash-parts");
const runDir = join(project, "run");
let service: TrainingService;
let browser: Browser | null = null;

beforeAll(async () => {
  seedRunDb(join(runDir, "run.db"), { episodes: 1, withCalls: 1, envs: ["chatter"] });
  const db = openRunDb(join(runDir, "run.db"));
  db.prepare("UPDATE episodes SET metadata = ?").run(JSON.stringify({ groupId: "0:0", rewardParts: PARTS }));
  db.close();
  // Offline, never started: the dashboard reads the run directory's run.db read-only.
  service = await TrainingService.listen({ host: "127.0.0.1", port: 0, projectDir: project, runDir, log: () => undefined });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
  removeTempDirs();
});

// Issue 25: each reward's parts (environment reward, model reward, judge verdict and its raw text) are shown in the dashboard.
describe("the dashboard's episode view", () => {
  it("the episode route carries the reward parts run.db recorded", async () => {
    const res = await fetch(`${service.origin()}/v1/dashboard/episodes/ep-0000000`, { headers: { authorization: `Bearer ${service.tokens().adminToken!}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { episode: { metadata: unknown } }).episode.metadata).toMatchObject({ rewardParts: PARTS });
  });

  it.skipIf(!CHROMIUM)("shows each part's value and each judge's raw verdict (headless Chromium)", { timeout: 120_000 }, async () => {
    const opened = await openPage();
    browser = opened.browser;
    const { page, errors } = opened;
    await page.goto(service.dashboardUrl());
    await page.waitForSelector("#episodes tbody tr.ep");
    await page.click("#episodes tbody tr.ep");
    await page.waitForSelector("#episode:not([hidden]) .reward-parts");
    expect(await page.textContent("#episode .reward-parts p[data-agent=solver]")).toBe("reward parts of solver: env 0.000, style 0.731, judge 0.800");
    expect(await page.textContent("#episode .reward-parts details[data-verdict=judge] pre")).toBe(PARTS.solver.verdicts.judge);
    expect(errors).toEqual([]);
  });
});
