import type { ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { Browser } from "playwright-core";
import { CHROMIUM, openPage } from "../helpers/chromium.ts";
import { stringify } from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import { spawnAgentjet, stopChild, waitFor } from "./fixtures/spawn-client.ts";

const ROOT = join(import.meta.dirname, "..", "..");
/** CI installs Debian's chromium and sets AGENTJET_REQUIRE_CHROMIUM=1: there, no browser fails the test instead of skipping it. */
const CHROMIUM_REQUIRED = process.env.AGENTJET_REQUIRE_CHROMIUM === "1";
if (!CHROMIUM && !CHROMIUM_REQUIRED) console.warn("\n!!! SKIPPED: no /usr/bin/chromium (apt install chromium); the dashboard's browser test did NOT run\n");
const project = mkdtempSync(join(tmpdir(), "agentjet-dashboard-e2e-"));
const runDir = join(project, "run");
/** Where the screenshot is kept after the test (the project folder is removed). */
const SCREENSHOT = join(tmpdir(), "agentjet-dashboard-e2e.png");
const children: ChildProcess[] = [];
let browser: Browser | null = null;

afterAll(async () => {
  await browser?.close();
  await Promise.all(children.map((c) => stopChild(c)));
  rmSync(project, { recursive: true, force: true });
});

function agentjet(args: string[], env: Record<string, string> = {}): { output: () => string } {
  const spawned = spawnAgentjet(args, env);
  children.push(spawned.child);
  return spawned;
}

function readDb<T>(fn: (db: Database.Database) => T): T {
  const db = new Database(join(runDir, "run.db"), { readonly: true, fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** The page's globals the test reads (its tsconfig has no DOM types). */
type PageGlobals = {
  document: { getElementById(id: string): { textContent: string | null } | null; querySelectorAll(s: string): Iterable<{ textContent: string | null }> };
  sessionStorage: { getItem(k: string): string | null };
};

/** `name{labels} value` lines of a Prometheus text body, by name and label text. */
function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

describe.skipIf(!CHROMIUM && !CHROMIUM_REQUIRED)("the dashboard of a real `agentjet serve` run, in headless Chromium", () => {
  if (!CHROMIUM) {
    it("needs Chromium", () => {
      throw new Error("AGENTJET_REQUIRE_CHROMIUM=1 but neither /usr/bin/chromium nor /usr/bin/chromium-browser exists (apt install chromium)");
    });
    return;
  }
  it("follows the step counter, shows an episode's calls and trained tokens as run.db has them, and /metrics agrees with run.db", { timeout: 300_000 }, async () => {
    const pluginDir = join(project, "arith");
    cpSync(join(ROOT, "environments", "arith"), pluginDir, { recursive: true });
    const config = {
      run: { dir: runDir, seed: 1, steps: 1000, checkpointEvery: 1000 },
      policies: { main: { tokenizer: "embedded", engine: { kind: "embedded", model: { layers: 1, dim: 16, heads: 2, context: 64, seed: 1 } } } },
      environments: [{ name: "arith", path: pluginDir, split: "train", roles: { solver: "main" } }],
      sampling: { temperature: 1, maxTokens: 3 },
      batching: { strategy: "tasks", batchTasks: 2, groupSize: 4 },
      eval: { every: 0, split: "test", tasks: 4 },
    };
    writeFileSync(join(project, "run.yaml"), stringify(config));
    const serve = agentjet(["serve", "--config", join(project, "run.yaml"), "--port", "0", "--project", project, "--run-dir", runDir]);
    const link = await waitFor(`the dashboard link (serve said:\n${serve.output()})`, () => /"dashboard":"(http:[^"]+)"/.exec(serve.output())?.[1]);
    // The link carries a one-time login code, never the admin token (serve's log holds no token).
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/dashboard#code=aj-login-/);
    const origin = new URL(link).origin;
    const tokens = JSON.parse(readFileSync(join(runDir, "tokens.json"), "utf8")) as { adminToken: string; clientTokens: string[] };
    const client = tokens.clientTokens[0]!;
    agentjet(["client", "--server", origin, "--env-path", pluginDir, "--envs", "arith", "--concurrency", "8", "--client-id", "e2e-client"], { AGENTJET_CLIENT_TOKEN: client });

    // The data routes need the admin token; the page itself holds none.
    expect((await fetch(`${origin}/v1/dashboard/live`)).status).toBe(401);
    expect((await fetch(`${origin}/v1/dashboard/live`, { headers: { authorization: `Bearer ${client}` } })).status).toBe(403);
    expect((await fetch(`${origin}/dashboard`)).headers.get("content-security-policy")).toContain("script-src 'self'");

    const opened = await openPage({ width: 1400, height: 1000 });
    browser = opened.browser;
    const { page, errors } = opened;
    await page.goto(link);
    // The code leaves the address bar at once, and is spent: the page now holds the admin token.
    expect(page.url()).toBe(`${origin}/dashboard`);
    const code = new URL(link).hash.slice("#code=".length);
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).sessionStorage.getItem("agentjet-admin-token") !== null);
    const again = await fetch(`${origin}/v1/dashboard/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ code }) });
    expect(again.status).toBe(401);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe("AJ_ERR_DASHBOARD_CODE_INVALID");
    expect(serve.output()).not.toContain(tokens.adminToken);
    await page.waitForFunction(() => /^\d+$/.test((globalThis as unknown as PageGlobals).document.getElementById("step")?.textContent ?? ""), null, { timeout: 120_000 });
    const first = Number(await page.textContent("#step"));
    await page.waitForFunction((n) => Number((globalThis as unknown as PageGlobals).document.getElementById("step")?.textContent) > n, first, { timeout: 120_000 });
    await page.waitForSelector("#clients tr[data-client-id='e2e-client']");
    await page.waitForSelector("#charts img[data-chart='reward-per-env']", { timeout: 60_000 });

    // The episode browser: ended episodes, newest first; open the first.
    await page.selectOption("#filter select[name=state]", "ended");
    await page.click("#filter button[type=submit]");
    // the filtered page has replaced the unfiltered one
    await page.waitForFunction(() => {
      const states = [...(globalThis as unknown as PageGlobals).document.querySelectorAll("#episodes tbody tr.ep td:nth-child(5)")].map((td) => td.textContent);
      return states.length > 0 && states.every((s) => s === "ended");
    });
    const episodeId = (await page.getAttribute("#episodes tbody tr.ep", "data-episode-id"))!;
    // by its id: the list follows the run, so the first row may be a newer episode by now
    await page.click(`#episodes tbody tr.ep[data-episode-id='${episodeId}']`);
    await page.waitForSelector("#episode:not([hidden]) .call");
    const shown = await page.$$eval("#episode .call", (calls) =>
      calls.map((c) => ({
        callId: c.getAttribute("data-call-id"),
        tokens: [...c.querySelectorAll(".out .tok")].map((t) => ({ id: Number(t.getAttribute("data-id")), trained: t.classList.contains("trained"), title: t.getAttribute("title") })),
        promptHighlights: c.querySelectorAll(".seg .tok.trained").length,
      })),
    );
    const recorded = readDb((db) => ({
      episode: db.prepare("SELECT state, eval, rewards FROM episodes WHERE episode_id = ?").get(episodeId) as { state: string; eval: number; rewards: string },
      calls: db.prepare("SELECT call_id, output_ids, output_logprobs, trainable FROM calls WHERE episode_id = ? ORDER BY agent_id, seq").all(episodeId) as Array<{ call_id: string; output_ids: string; output_logprobs: string; trainable: number }>,
    }));
    expect(recorded.episode).toMatchObject({ state: "ended", eval: 0 });
    expect(shown.map((c) => c.callId)).toEqual(recorded.calls.map((c) => c.call_id));
    expect(recorded.calls.length).toBeGreaterThan(0);
    recorded.calls.forEach((c, i) => {
      const ids = JSON.parse(c.output_ids) as number[];
      const logprobs = JSON.parse(c.output_logprobs) as number[];
      expect(shown[i]!.tokens.map((t) => t.id)).toEqual(ids);
      // A rewarded training episode's generated tokens are all under the loss mask; its prompt is not.
      expect(c.trainable).toBe(1);
      expect(shown[i]!.tokens.every((t) => t.trained)).toBe(true);
      expect(shown[i]!.promptHighlights).toBe(0);
      shown[i]!.tokens.forEach((t, j) => expect(t.title).toContain(`logprob ${logprobs[j]!.toFixed(4)}`));
    });
    expect(await page.textContent("#episode-body")).toContain("sample #0");
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    console.log(`dashboard screenshot: ${SCREENSHOT}`);
    expect(errors).toEqual([]);

    // Stop the engine, so run.db holds still, then scrape /metrics with the client token.
    const stop = await fetch(`${origin}/v1/engine/stop`, { method: "POST", headers: { authorization: `Bearer ${tokens.adminToken}`, "content-type": "application/json" }, body: "{}" });
    expect(stop.status).toBe(200);
    const scrape = await fetch(`${origin}/metrics`, { headers: { authorization: `Bearer ${client}` } });
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get("content-type")).toContain("text/plain; version=0.0.4");
    const metrics = parseMetrics(await scrape.text());
    const db = readDb((d) => ({
      ended: (d.prepare("SELECT COUNT(*) AS n FROM episodes WHERE env = 'arith' AND state = 'ended'").get() as { n: number }).n,
      aborted: d.prepare("SELECT json_extract(abort_reason, '$.kind') AS kind, COUNT(*) AS n FROM episodes WHERE env = 'arith' AND state = 'aborted' GROUP BY kind").all() as Array<{ kind: string; n: number }>,
      calls: (d.prepare("SELECT COUNT(*) AS n, SUM(json_array_length(output_ids)) AS tokens FROM calls WHERE policy = 'main'").get() as { n: number; tokens: number }),
    }));
    expect(db.ended).toBeGreaterThan(0);
    expect(metrics.get('agentjet_episodes_ended_total{env="arith"}')).toBe(db.ended);
    for (const a of db.aborted) expect(metrics.get(`agentjet_episode_failures_total{env="arith",kind="${a.kind}"}`)).toBe(a.n);
    expect(metrics.get('agentjet_calls_total{policy="main"}')).toBe(db.calls.n);
    expect(metrics.get('agentjet_generated_tokens_total{policy="main"}')).toBe(db.calls.tokens);
    expect(metrics.get('agentjet_engine_state{state="offline"}')).toBe(1);
    expect(metrics.get("agentjet_step")).toBeGreaterThan(first);
    expect(metrics.get("agentjet_step_duration_seconds_count")).toBe(metrics.get("agentjet_step"));
    expect((await fetch(`${origin}/metrics`)).status).toBe(401);
  });
});
