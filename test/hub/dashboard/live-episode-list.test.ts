import { join } from "node:path";
import type { Browser } from "playwright-core";
import { CHROMIUM, openPage } from "../../helpers/chromium.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TrainingService } from "../../../hub/run/service.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";
import { call, smallConfig, waitFor } from "../run/helpers.ts";


const project = tempDir("dash-follow");
let service: TrainingService;
let browser: Browser | null = null;
let admin: string;
let client: string;

beforeAll(async () => {
  // Client-driven episodes only (no swarm client connects): the test decides when each one changes state.
  const config = await smallConfig("tasks", 1000);
  config.batching.groupSize = 2;
  service = await TrainingService.listen({ host: "127.0.0.1", port: 0, projectDir: project, runDir: join(project, "run"), config, log: () => undefined });
  admin = service.tokens().adminToken!;
  client = service.tokens().clientTokens[0]!;
  await service.start();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
  removeTempDirs();
});

/** Begins a client-driven episode and makes its one chat call; returns its id. */
async function begin(taskId: string): Promise<string> {
  const begun = await call(`${service.origin()}/v1/episodes/begin`, "POST", { taskId, env: "raw" }, client);
  expect(begun.status).toBe(201);
  const res = await fetch(`${begun.json.baseUrl}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${begun.json.keys.main}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "main", messages: [{ role: "user", content: `${taskId}=` }] }),
  });
  expect(res.status).toBe(200);
  return begun.json.episode.episodeId as string;
}

async function end(episodeId: string, reward: number): Promise<void> {
  expect((await call(`${service.origin()}/v1/episodes/${episodeId}/end`, "POST", { rewards: { main: reward } }, client)).status).toBe(200);
}

async function live(): Promise<{ episodesVersion: number }> {
  return (await call(`${service.origin()}/v1/dashboard/live`, "GET", undefined, admin)).json;
}

async function listed(episodeId: string): Promise<{ state: string; reward: number | null } | undefined> {
  const page = await call(`${service.origin()}/v1/dashboard/episodes?limit=500`, "GET", undefined, admin);
  expect(page.status).toBe(200);
  return (page.json.episodes as Array<{ episodeId: string; state: string; reward: number | null }>).find((e) => e.episodeId === episodeId);
}

/** The page's globals the test reads (its tsconfig has no DOM types). */
type PageGlobals = { document: { querySelector(s: string): { textContent: string | null } | null } };

describe("the dashboard's episode list while a run goes (a real `serve`, client-driven episodes)", () => {
  it("the live stream's episodesVersion moves with each episode transition, and the list route has the new state", { timeout: 60_000 }, async () => {
    const before = (await live()).episodesVersion;
    const id = await begin("3+4");
    const begun = (await live()).episodesVersion;
    expect(begun).toBeGreaterThan(before);
    expect(await listed(id)).toMatchObject({ state: "claimed", reward: null });
    await end(id, 1);
    expect((await live()).episodesVersion).toBeGreaterThan(begun);
    expect(await listed(id)).toMatchObject({ state: "ended", reward: 1 });
    // how long the query held the server's event loop, which paces the page's refetches
    const res = await fetch(`${service.origin()}/v1/dashboard/episodes`, { headers: { authorization: `Bearer ${admin}` } });
    expect(res.headers.get("server-timing")).toMatch(/^db;dur=\d+\.\d$/);
  });

  // The page fetched the list once, when it opened: new episodes never appeared and a claimed row stayed
  // claimed after its episode ended, until the user pressed Search.
  it.skipIf(!CHROMIUM)("the page's list shows new episodes and their new states without a reload or a search (headless Chromium)", { timeout: 120_000 }, async () => {
    const opened = await openPage();
    browser = opened.browser;
    const { page, errors } = opened;
    await page.goto(service.dashboardUrl());
    await page.waitForFunction(() => /^\d+ episodes$/.test((globalThis as unknown as PageGlobals).document.querySelector("#total")?.textContent ?? ""));

    const id = await begin("5+2");
    const row = `#episodes tbody tr[data-episode-id='${id}']`;
    await page.waitForSelector(row, { timeout: 30_000 });
    expect(await page.textContent(`${row} td:nth-child(5)`)).toBe("claimed");

    // A filter being edited is not applied until it is searched: the list keeps following the last search.
    await page.selectOption("#filter select[name=state]", "aborted");
    await end(id, 1);
    await page.waitForFunction((sel) => (globalThis as unknown as PageGlobals).document.querySelector(sel)?.textContent === "ended", `${row} td:nth-child(5)`, { timeout: 30_000 });
    expect(await page.textContent(`${row} td:nth-child(6)`)).toBe("1.000");
    const total = (await call(`${service.origin()}/v1/dashboard/episodes`, "GET", undefined, admin)).json.total as number;
    await page.waitForFunction((t) => (globalThis as unknown as PageGlobals).document.querySelector("#total")?.textContent === `${t} episodes`, total, { timeout: 30_000 });
    expect(errors).toEqual([]);
  });

  // The run closes run.db before it ends (the report is written after): the dashboard answered 500 then.
  it("answers from run.db while the stopped run writes its report, and after", { timeout: 120_000 }, async () => {
    const id = await begin("1+1");
    await end(id, 0);
    const paths = ["/v1/dashboard/episodes?limit=5", `/v1/dashboard/episodes/${id}`, "/v1/dashboard/failures", "/metrics"];
    const statuses = new Map<string, number[]>(paths.map((p) => [p, []]));
    let offline = false;
    const polls = paths.map(async (path) => {
      while (!offline) {
        const res = await fetch(`${service.origin()}${path}`, { headers: { authorization: `Bearer ${admin}` } });
        await res.arrayBuffer();
        statuses.get(path)!.push(res.status);
      }
    });
    const stopped = await call(`${service.origin()}/v1/engine/stop`, "POST", {}, admin);
    expect(stopped.json).toMatchObject({ state: "offline", stopped: true });
    offline = true;
    await Promise.all(polls);
    for (const [path, codes] of statuses) expect(codes.filter((c) => c !== 200), path).toEqual([]);
    expect(await waitFor(() => listed(id))).toMatchObject({ state: "ended", reward: 0 });
  });
});
