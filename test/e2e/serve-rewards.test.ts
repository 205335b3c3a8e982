import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { spawnAgentjet, stopChild, waitFor } from "./fixtures/spawn-client.ts";

const project = mkdtempSync(join(tmpdir(), "agentjet-serve-rewards-"));
const runDir = join(project, "run");
let serve: ChildProcess | null = null;

afterAll(async () => {
  if (serve) await stopChild(serve);
  rmSync(project, { recursive: true, force: true });
});

// arith declares rewards in [0, 1]; `peer` is a frozen model no call reaches.
const CONFIG = `run: { seed: 1, steps: 50, checkpointEvery: 50 }
policies:
  main:
    tokenizer: embedded
    engine: { kind: embedded, model: { layers: 1, dim: 16, heads: 2, context: 64, seed: 1 } }
frozen:
  peer: { baseUrl: "http://127.0.0.1:9/v1", model: peer }
environments:
  - { name: arith, split: train, roles: { solver: main } }
sampling: { temperature: 1, maxTokens: 2 }
batching: { strategy: episodes, batchTasks: 1, groupSize: 2, filterEqualRewards: false }
`;

async function post(url: string, token: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    // A string is sent as it stands: JSON has no Infinity, but 1e999 parses to it.
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

// Issue 18 ("reward validation for frozen and client-driven episodes"): the rule of item 3 (finite, inside
// the environment's declared range, else a `protocol` failure that never reaches a batch) holds for
// episodes begun over HTTP on `agentjet serve`, trained or frozen, not only for `agentjet train`'s.
describe("agentjet serve: client-driven episodes' rewards are checked where they enter", () => {
  it("refuses out-of-range and non-finite rewards with a 422 (a protocol abort, never trained); trains the valid ones", { timeout: 240_000 }, async () => {
    writeFileSync(join(project, "run.yaml"), CONFIG);
    const spawned = spawnAgentjet(["serve", "--config", join(project, "run.yaml"), "--port", "0", "--project", project, "--run-dir", runDir]);
    serve = spawned.child;
    const url = await waitFor("serve to listen", () => /"address":"(http:\/\/[^"]+)"/.exec(spawned.output())?.[1]?.replace("0.0.0.0", "127.0.0.1"));
    const token = (JSON.parse(readFileSync(join(runDir, "tokens.json"), "utf8")) as { clientTokens: string[] }).clientTokens[0]!;
    const status = async (): Promise<{ state?: string; versions?: Record<string, number> }> =>
      (await (await fetch(`${url}/v1/engine/status`, { headers: { authorization: `Bearer ${token}` } })).json()) as { state?: string; versions?: Record<string, number> };
    await waitFor("the engine to roll", async () => (await status()).state === "rolling");

    /** Begins an episode, makes one policy call when a policy plays it, and ends it with `rewards` (an object, or raw JSON). */
    const episode = async (begin: Record<string, unknown>, rewards: string): Promise<{ id: string; end: { status: number; json: any } }> => {
      const begun = await post(`${url}/v1/episodes/begin`, token, begin);
      expect(begun.status, JSON.stringify(begun.json)).toBe(201);
      const id = begun.json.episode.episodeId as string;
      if (begin.agents === undefined) {
        const chat = await fetch(`${begun.json.baseUrl}/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${begun.json.keys.main}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "main", messages: [{ role: "user", content: "2+2=" }] }),
        });
        expect(chat.status).toBe(200);
      }
      return { id, end: await post(`${url}/v1/episodes/${id}/end`, token, `{"rewards":${rewards}}`) };
    };

    const refused = [
      await episode({ taskId: "a", env: "arith" }, `{"main":5}`),
      await episode({ taskId: "a", env: "arith" }, `{"main":-0.5}`),
      await episode({ taskId: "a", env: "arith" }, `{"main":1e999}`),
      await episode({ taskId: "a", env: "arith", agents: { main: { kind: "frozen", target: "peer" } } }, `{"main":7}`),
      // An environment the server knows no range of: finite is still the rule.
      await episode({ taskId: "b", env: "own-data" }, `{"main":-1e999}`),
    ];
    for (const r of refused) {
      expect(r.end.status, JSON.stringify(r.end.json)).toBe(422);
      expect(r.end.json.error).toMatchObject({ code: "AJ_ERR_EPISODE_REWARDS", param: "rewards" });
    }
    const trained = [await episode({ taskId: "c", env: "arith" }, `{"main":1}`), await episode({ taskId: "c", env: "arith" }, `{"main":0}`)];
    for (const r of trained) expect(r.end.status, JSON.stringify(r.end.json)).toBe(200);
    await waitFor("a step on the valid episodes", async () => ((await status()).versions?.main ?? 0) >= 1);

    const db = new Database(join(runDir, "run.db"), { readonly: true });
    try {
      const state = db.prepare("SELECT state, abort_reason FROM episodes WHERE episode_id = ?");
      for (const r of refused) {
        const row = state.get(r.id) as { state: string; abort_reason: string };
        expect(row.state, r.id).toBe("aborted");
        expect(JSON.parse(row.abort_reason).kind, r.id).toBe("protocol");
      }
      const ledger = (db.prepare("SELECT episode_id FROM trained_episodes").all() as Array<{ episode_id: string }>).map((r) => r.episode_id);
      expect(ledger.sort()).toEqual(trained.map((r) => r.id).sort());
      const pooled = db.prepare("SELECT COUNT(*) AS n FROM training_pool_units WHERE episode_id = ?");
      for (const r of refused) expect((pooled.get(r.id) as { n: number }).n, r.id).toBe(0);
    } finally {
      db.close();
    }
  });
});
