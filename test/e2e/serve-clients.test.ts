import type { ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { spawnAgentjet, stopChild, waitFor } from "./fixtures/spawn-client.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const project = mkdtempSync(join(tmpdir(), "agentjet-serve-e2e-"));
const runDir = join(project, "run");
const children: ChildProcess[] = [];

afterAll(async () => {
  await Promise.all(children.map((c) => stopChild(c)));
  rmSync(project, { recursive: true, force: true });
});

function agentjet(args: string[], env: Record<string, string> = {}): { child: ChildProcess; output: () => string } {
  const spawned = spawnAgentjet(args, env);
  children.push(spawned.child);
  return spawned;
}

async function call(url: string, method: "GET" | "POST", token: string, body?: unknown): Promise<{ status: number; json: any }> {
  const json = method === "POST" ? (body ?? {}) : undefined;
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(json !== undefined ? { "content-type": "application/json" } : {}) },
    ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

function endedRewards(): Array<{ episode_id: string; env: string; rewards: string; metadata: string }> {
  if (!existsSync(join(runDir, "run.db"))) return [];
  const db = new Database(join(runDir, "run.db"), { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT episode_id, env, rewards, metadata FROM episodes WHERE state = 'ended'").all() as never;
  } finally {
    db.close();
  }
}

describe("agentjet serve with separate client processes", () => {
  it("is configured and started by a client, trains on scheduled and client-driven episodes, survives a SIGKILLed client, follows a reward edit, stops cleanly", { timeout: 400_000 }, async () => {
    // The arith plugin as a local folder the run trains from (a development version) and one client watches.
    const pluginDir = join(project, "arith");
    cpSync(join(ROOT, "environments", "arith"), pluginDir, { recursive: true });

    const serve = agentjet(["serve", "--port", "0", "--project", project, "--run-dir", runDir]);
    const listening = await waitFor("serve to listen", () => /"address":"(http:\/\/[^"]+)"/.exec(serve.output())?.[1]);
    const url = listening.replace("0.0.0.0", "127.0.0.1");
    const tokens = JSON.parse(readFileSync(join(runDir, "tokens.json"), "utf8")) as { adminToken: string; clientTokens: string[] };
    const admin = tokens.adminToken;
    const client = tokens.clientTokens[0]!;
    expect((await call(`${url}/v1/engine/status`, "GET", client)).json.state).toBe("offline");

    const config = {
      run: { seed: 1, steps: 1000, checkpointEvery: 1000 },
      policies: { main: { tokenizer: "embedded", engine: { kind: "embedded", model: { layers: 1, dim: 16, heads: 2, context: 64, seed: 1 } } } },
      environments: [{ name: "arith", path: pluginDir, split: "train", roles: { solver: "main" } }],
      sampling: { temperature: 1, maxTokens: 2 },
      batching: { strategy: "episodes", batchTasks: 4, groupSize: 4 },
      server: { idleTimeoutS: 60, syncTimeoutS: 30 },
    };
    expect((await call(`${url}/v1/engine/config`, "POST", admin, { config })).status).toBe(200);
    const started = await call(`${url}/v1/engine/start`, "POST", admin);
    expect(started.json).toMatchObject({ state: "rolling", versions: { main: 0 } });

    const clientArgs = (id: string, extra: string[] = []) => ["client", "--server", url, "--env-path", pluginDir, "--envs", "arith", "--concurrency", "4", "--client-id", id, ...extra];
    const doomed = agentjet(clientArgs("doomed"), { AGENTJET_CLIENT_TOKEN: client });
    const watcher = agentjet(clientArgs("watcher", ["--watch"]), { AGENTJET_CLIENT_TOKEN: client });

    // Client-driven episodes of another task set, over raw HTTP, beside the scheduled ones.
    let raw = 0;
    let rawErrors = 0;
    let looping = true;
    const loop = (async () => {
      while (looping) {
        try {
          await rawEpisode();
        } catch (err) {
          if (looping) throw err;
        }
      }
    })();
    async function rawEpisode(): Promise<void> {
      const begun = await call(`${url}/v1/episodes/begin`, "POST", client, { taskId: `raw-${raw % 4}`, env: "raw-math" });
      if (begun.status !== 201) {
        if (begun.status !== 503) rawErrors += 1;
        await new Promise((r) => setTimeout(r, 50));
        return;
      }
      const chat = await fetch(`${begun.json.baseUrl}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${begun.json.keys.main}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "main", messages: [{ role: "user", content: "2+2=" }] }),
      });
      const answer = chat.ok ? ((await chat.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content : "";
      const id = begun.json.episode.episodeId as string;
      const end = await call(`${url}/v1/episodes/${id}/end`, "POST", client, { rewards: { main: answer.startsWith("4") ? 1 : 0 } });
      if (end.status === 200) raw += 1;
    }

    const status = () => call(`${url}/v1/engine/status`, "GET", client).then((r) => r.json);
    await waitFor("two steps", async () => ((await status()).versions?.main ?? 0) >= 2, 200_000, 200);
    const scheduled = () => endedRewards().filter((e) => e.env === "arith").length;
    await waitFor(`scheduled episodes to end (clients said:\n${doomed.output()}\n${watcher.output()})`, () => scheduled() > 0, 120_000, 200);
    expect(raw).toBeGreaterThan(0);

    // SIGKILL a client holding episodes: they are re-queued at once (the socket closes), not after the lease.
    const claimedBy = async (id: string) =>
      ((await call(`${url}/v1/episodes?state=claimed`, "GET", admin)).json.episodes as Array<{ clientId: string | null }>).filter((e) => e.clientId === id).length;
    await waitFor("the doomed client to hold episodes", async () => (await claimedBy("doomed")) > 0, 60_000, 20);
    doomed.child.kill("SIGKILL");
    const killedAt = Date.now();
    await waitFor("its episodes to be re-queued", async () => (await claimedBy("doomed")) === 0, 10_000, 20);
    const requeueMs = Date.now() - killedAt;
    console.log(`serve e2e: SIGKILLed client's episodes re-queued after ${requeueMs} ms`);
    expect(requeueMs).toBeLessThan(1000);
    const afterKill = (await status()).versions.main as number;
    await waitFor("a step after the kill", async () => ((await status()).versions?.main ?? 0) > afterKill, 200_000, 200);

    // A reward edit under --watch reaches the next episodes, with the server, weights and optimizer untouched.
    const score = join(pluginDir, "src", "score.ts");
    const source = readFileSync(score, "utf8");
    const edited = source.replace(/const reward = [^;]+;/, "const reward = 0.25;");
    expect(edited).not.toBe(source);
    const before = new Set(endedRewards().map((e) => e.episode_id));
    writeFileSync(score, edited);
    await waitFor(
      "an episode scored by the edited reward",
      () => endedRewards().some((e) => e.env === "arith" && !before.has(e.episode_id) && JSON.parse(e.rewards).solver === 0.25),
      120_000,
      200,
    );
    expect(watcher.output()).toMatch(/arith reloaded: code hash/);

    // Stop cleanly: offline, a checkpoint; the clients and the raw loop keep their connections.
    const stopped = await call(`${url}/v1/engine/stop`, "POST", admin);
    expect(stopped.json).toMatchObject({ state: "offline", stopped: true, lastRun: { reason: "interrupted" } });
    looping = false;
    await loop;
    expect(rawErrors).toBe(0);
    expect(existsSync(join(runDir, "checkpoints", "latest.json"))).toBe(true);
    const serveExit = new Promise<number | null>((r) => serve.child.once("exit", (code) => r(code)));
    await stopChild(watcher.child);
    serve.child.kill("SIGTERM");
    expect(await serveExit).toBe(130);
    expect(serve.output()).not.toMatch(/"level":50/);
  });
});
