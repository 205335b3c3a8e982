import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { hashPluginDir } from "../../hub/swarm/hash-plugin-dir.ts";
import { ENV_MISMATCH_CODE } from "../../sdk/swarm/protocol.ts";
import { FIXTURE_ENVS } from "./fixtures/fixture-envs.ts";
import { waitFor } from "./fixtures/scripted-swarm.ts";
import { spawnClient, stopChild } from "./fixtures/spawn-client.ts";

/**
 * Hot swap across processes: a real `agentjet train` (server, scheduler, coordinator, embedded engine,
 * no local clients) and a separate `agentjet client --env-path <plugin> --watch`. Editing the plugin's
 * reward code reaches the next episodes, and every episode records the code hash it ran with.
 */

const ROOT = join(import.meta.dirname, "..", "..");
// The run's project is a temp folder, where `--import tsx` would not resolve.
const TOKEN = "hot-swap-e2e-client-token";
const TSX = pathToFileURL(join(ROOT, "node_modules", "tsx", "dist", "esm", "index.mjs")).href;
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const c of children) await stopChild(c);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface EpisodeEnd {
  type: "episode-end";
  purpose: string;
  reward: number;
  code?: { hash: string; dev: boolean };
}

/** `agentjet train <config> --json` as a child process; its events parsed as they arrive. */
function startTrain(dir: string, env: Record<string, unknown>): { child: ChildProcess; events: () => Array<Record<string, unknown>>; output: () => string } {
  const config = {
    run: { dir: join(dir, "run"), seed: 3, steps: 100000, checkpointEvery: 100000 },
    server: { auth: { clientTokens: [TOKEN] } },
    policies: { main: { tokenizer: "embedded", engine: { kind: "embedded", model: { layers: 1, dim: 16, heads: 2, context: 64 } } } },
    environments: [{ name: "count-up", roles: { solver: "main" }, maxTurns: 2, ...env }],
    sampling: { temperature: 1, maxTokens: 2 },
    batching: { strategy: "tasks", batchTasks: 2, groupSize: 2 },
    clients: { local: 0, concurrency: 2 },
  };
  const file = join(dir, "run.yaml");
  writeFileSync(file, JSON.stringify(config));
  const child = spawn(process.execPath, ["--no-node-snapshot", "--import", TSX, join(ROOT, "bin", "agentjet.js"), "train", file, "--port", "0", "--json", "--no-report"], {
    cwd: dir,
    env: { ...process.env, AGENTJET_CHILD: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  let err = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (err += d));
  const events = () =>
    out
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as Record<string, unknown>];
        } catch {
          return [];
        }
      });
  return { child, events, output: () => `${out}\n--- stderr ---\n${err}` };
}

async function serverOrigin(train: ReturnType<typeof startTrain>): Promise<string> {
  let origin = "";
  await waitFor(
    () => {
      for (const e of train.events()) {
        const m = e.type === "log" ? /server (http:\/\/[^/\s]+)\/v1/.exec(String(e.message)) : null;
        if (m) origin = m[1]!;
      }
      return origin !== "";
    },
    90_000,
    "the train server to listen",
  ).catch((err) => {
    throw new Error(`${(err as Error).message}\n${train.output()}`);
  });
  return origin;
}

function pluginCopy(): { dir: string; plugin: string; src: string } {
  const dir = mkdtempSync(join(tmpdir(), "agentjet-hot-swap-train-"));
  dirs.push(dir);
  const plugin = join(dir, "count-up");
  cpSync(join(FIXTURE_ENVS, "count-up"), plugin, { recursive: true });
  return { dir, plugin, src: join(plugin, "src", "index.ts") };
}

/** What `sed -i` and safe-write editors do: write a temp file, rename it over the original. */
function replacingSave(file: string, content: string): void {
  writeFileSync(`${file}.swp`, content);
  renameSync(`${file}.swp`, file);
}

/** A `--watch` client of `plugin` on `train`'s server; `explain` rethrows a failed wait with both outputs. */
async function startWatchingClient(train: ReturnType<typeof startTrain>, clientId: string, plugin: string): Promise<{ client: ReturnType<typeof spawnClient>; explain: (err: unknown) => never }> {
  const client = spawnClient({ server: await serverOrigin(train), clientId, envs: ["count-up"], concurrency: 2, envPath: plugin, extra: ["--watch"], token: TOKEN });
  children.push(client.child);
  return {
    client,
    explain: (err) => {
      throw new Error(`${(err as Error).message}\n--- train ---\n${train.output()}\n--- client ---\n${client.output()}`);
    },
  };
}

const episodesOf = (train: ReturnType<typeof startTrain>, hash: string): EpisodeEnd[] =>
  train
    .events()
    .map((e) => e as unknown as EpisodeEnd)
    .filter((e) => e.type === "episode-end" && e.code?.hash === hash);

describe("hot swap with a real agentjet train and a separate --watch client", () => {
  it("a reward edit (replacing save, then an in-place write) reaches the next episodes; each records the code hash it ran with", async () => {
    const { dir, plugin, src } = pluginCopy();
    const train = startTrain(dir, { path: plugin });
    const { client, explain } = await startWatchingClient(train, "dev", plugin);

    const h1 = await hashPluginDir(plugin);
    await waitFor(() => episodesOf(train, h1).length >= 4, 90_000, "episodes of the original code").catch(explain);
    const pid = train.child.pid;

    replacingSave(src, readFileSync(src, "utf8").replace("right ? 1 : 0", "right ? 1 : 0.5"));
    const h2 = await hashPluginDir(plugin);
    expect(h2).not.toBe(h1);
    await waitFor(() => episodesOf(train, h2).length >= 4, 60_000, "episodes of the edited reward code").catch(explain);

    // The regression: after a replacing save, a watch on the file itself misses every later write.
    appendFileSync(src, "\n// edited in place after the replacing save\n");
    const h3 = await hashPluginDir(plugin);
    await waitFor(() => episodesOf(train, h3).length >= 2, 60_000, "episodes after the in-place write").catch(explain);

    const train1 = episodesOf(train, h1).filter((e) => e.purpose === "train");
    const train2 = episodesOf(train, h2).filter((e) => e.purpose === "train");
    expect(train1.every((e) => e.reward === 0 || e.reward === 1)).toBe(true);
    expect(train2.every((e) => e.reward === 0.5 || e.reward === 1)).toBe(true);
    expect([...episodesOf(train, h2), ...episodesOf(train, h3)].every((e) => e.code?.dev === true)).toBe(true);
    expect(client.output()).toContain(`code hash ${h2.slice(0, 12)}`);
    expect(client.output()).not.toContain(ENV_MISMATCH_CODE);
    // The server side was never restarted: same process, one start event.
    expect(train.child.pid).toBe(pid);
    expect(train.events().filter((e) => e.type === "start")).toHaveLength(1);

    const exited = new Promise<number | null>((r) => train.child.once("exit", (code) => r(code)));
    train.child.kill("SIGINT");
    expect(await exited).toBe(130);
    await stopChild(client.child);
    const db = new Database(join(dir, "run", "run.db"), { readonly: true });
    const rows = db.prepare("SELECT metadata FROM episodes WHERE state = 'ended'").all() as Array<{ metadata: string | null }>;
    db.close();
    const recorded = new Set(rows.map((r) => (JSON.parse(r.metadata ?? "{}") as { code?: { hash: string } }).code?.hash));
    for (const h of [h1, h2, h3]) expect(recorded.has(h)).toBe(true);
  }, 300_000);

  it("a run that refuses development versions tells the edited client why, with both hashes and the fix, and logs the same", async () => {
    const { dir, plugin, src } = pluginCopy();
    const train = startTrain(dir, { path: plugin, allowDev: false });
    const { client, explain } = await startWatchingClient(train, "edited", plugin);
    const h1 = await hashPluginDir(plugin);
    // Unedited, the local copy is the pinned build: it gets episodes.
    await waitFor(() => episodesOf(train, h1).length >= 2, 90_000, "episodes of the pinned build").catch(explain);

    replacingSave(src, readFileSync(src, "utf8").replace("right ? 1 : 0", "right ? 1 : 0.5"));
    const h2 = await hashPluginDir(plugin);
    const refusal = `accepts only the pinned hash ${h1.slice(0, 12)}`;
    await waitFor(() => client.output().includes(refusal), 60_000, "the client to print the refusal").catch(explain);
    const serverSide = () => train.events().filter((e) => e.type === "log" && String(e.message).includes(refusal));
    await waitFor(() => serverSide().length > 0, 30_000, "the server to log the refusal").catch(explain);
    for (const text of [client.output(), String(serverSide()[0]!.message)]) {
      expect(text).toContain(h2.slice(0, 12));
      expect(text).toContain("allowDev: true");
      expect(text).toContain("re-pin");
    }
    expect(client.output()).toContain(ENV_MISMATCH_CODE);
    expect(serverSide()[0]!.level).toBe("warn");
    expect(episodesOf(train, h2)).toHaveLength(0);
    train.child.kill("SIGINT");
  }, 300_000);
});
