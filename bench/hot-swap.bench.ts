import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { type ClientEnvironment, SwarmClient } from "../sdk/swarm/index.ts";
import { resolveClientEnvs } from "../hub/swarm/client-environments.ts";
import { reloadLocalPlugins } from "../hub/swarm/reload-local-plugins.ts";
import type { RunEvent } from "../hub/train/events.ts";
import { runTraining } from "../hub/train/run-training.ts";
import { RunConfigSchema } from "../server/config/index.ts";
import { type Bench, fmt, median, quantile } from "./harness.ts";

const TOKEN = "bench-hot-swap-client-token";

/**
 * Edit-to-new-episode time of hot swap: a real training run (`runTraining`: server, scheduler,
 * coordinator, embedded engine training as it goes) on a local copy of `environments/arith` (`path`,
 * development versions accepted), and the client `agentjet client --env-path <copy> --watch` runs
 * (the same `resolveClientEnvs` + `SwarmClient` + `reloadLocalPlugins`). Each edit is an editor's
 * replacing save of the reward file (`src/score.ts`, written to a temp file and renamed over it). Timed
 * from the save to the end of the first episode whose recorded code hash is the new one, with the
 * reload (debounce, hash, bundle, new isolates, re-announce) as the first part of it.
 */
export const bench: Bench = {
  name: "hot-swap",
  async run({ quick, log }) {
    const edits = quick ? 3 : 9;
    const dir = mkdtempSync(join(tmpdir(), "agentjet-bench-hot-swap-"));
    const plugin = join(dir, "arith");
    cpSync(join(import.meta.dirname, "..", "environments", "arith"), plugin, { recursive: true });
    const scoreFile = join(plugin, "src", "score.ts");
    const original = readFileSync(scoreFile, "utf8");

    const events: RunEvent[] = [];
    const stepTimes: number[] = [];
    const waiters = new Set<() => void>();
    const config = RunConfigSchema.parse({
      run: { dir: join(dir, "run"), seed: 1, steps: 100_000, checkpointEvery: 100_000 },
      server: { port: 0, auth: { clientTokens: [TOKEN] } },
      policies: { main: { tokenizer: "embedded", engine: { kind: "embedded", model: { layers: 1, dim: 16, heads: 2, context: 64 } } } },
      environments: [{ name: "arith", path: plugin, roles: { solver: "main" } }],
      sampling: { temperature: 1, maxTokens: 2 },
      batching: { strategy: "tasks", batchTasks: 4, groupSize: 4 },
      clients: { local: 0, concurrency: 8 },
    });
    const stop = new AbortController();
    const quiet = { event: () => undefined, fill: () => undefined, close: () => undefined };
    const run = runTraining({
      config,
      runDir: config.run.dir,
      projectDir: dir,
      progress: quiet,
      signal: stop.signal,
      report: false,
      onEvent: (e) => {
        if (e.type === "step") stepTimes.push(performance.now());
        events.push(e);
        for (const w of waiters) w();
      },
    });
    const until = (check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(poll);
          reject(new Error(`hot-swap bench: timed out waiting for ${what}`));
        }, timeoutMs);
        const poll = (): void => {
          if (!check()) return;
          clearTimeout(timer);
          waiters.delete(poll);
          resolve();
        };
        waiters.add(poll);
        poll();
      });

    let origin = "";
    await until(() => {
      for (const e of events) if (e.type === "log") origin = /server (http:\/\/[^/\s]+)\/v1/.exec(e.message)?.[1] ?? origin;
      return origin !== "";
    }, "the server");
    const { sources } = resolveClientEnvs(["arith"], { envPaths: [plugin], projectDir: dir, maxInstances: 8 });
    const opened = new Map<string, ClientEnvironment>();
    for (const s of sources) opened.set(s.name, await s.open());
    const reloadedAt = new Map<string, number>();
    // Episodes assigned after a reload run its build: the first such start, per build.
    const startedAt = new Map<string, number>();
    const client = new SwarmClient({
      url: origin,
      clientId: "bench-dev",
      token: TOKEN,
      environments: [...opened.values()],
      concurrency: 8,
      onEvent: (e) => {
        const hash = opened.get("arith")!.hash;
        if (e.type === "episode-start" && reloadedAt.has(hash) && !startedAt.has(hash)) startedAt.set(hash, performance.now());
      },
    });
    const reloader = reloadLocalPlugins({
      sources,
      opened,
      client,
      log: () => undefined,
      onReload: (_name, env) => {
        reloadedAt.set(env.hash, performance.now());
        for (const w of waiters) w();
      },
    });
    await client.start();

    const firstEnd = new Map<string, number>();
    const endsOf = (hash: string): number => events.filter((e) => e.type === "episode-end" && e.code?.hash === hash).length;
    const watchEnds = (e: RunEvent): void => {
      if (e.type === "episode-end" && e.code && !firstEnd.has(e.code.hash)) firstEnd.set(e.code.hash, performance.now());
    };
    let seen = 0;
    waiters.add(() => {
      for (; seen < events.length; seen++) watchEnds(events[seen]!);
    });

    const first = opened.get("arith")!.hash;
    await until(() => endsOf(first) >= 16, "episodes of the original code");
    const stepsBefore = events.filter((e) => e.type === "step").length;
    const toEpisode: number[] = [];
    const toReload: number[] = [];
    const toStart: number[] = [];
    let acrossSync = 0;
    try {
      for (let i = 1; i <= edits; i++) {
        const before = opened.get("arith")!.hash;
        const savedAt = performance.now();
        writeFileSync(`${scoreFile}.swp`, original.replace(": 0.1;", `: ${(0.1 + i / 100).toFixed(2)};`));
        renameSync(`${scoreFile}.swp`, scoreFile);
        await until(() => opened.get("arith")!.hash !== before, `reload ${i}`);
        const hash = opened.get("arith")!.hash;
        await until(() => firstEnd.has(hash), `the first episode of edit ${i}`);
        toReload.push(reloadedAt.get(hash)! - savedAt);
        toStart.push((startedAt.get(hash) ?? Number.NaN) - savedAt);
        toEpisode.push(firstEnd.get(hash)! - savedAt);
        if (stepTimes.some((t) => t >= savedAt && t <= firstEnd.get(hash)!)) acrossSync += 1;
        log(`edit ${i}: reload ${fmt(toReload.at(-1)!)} ms, first new episode started ${fmt(toStart.at(-1)!)} ms, ended ${fmt(toEpisode.at(-1)!)} ms`);
        // Let a few episodes of this version run, then save again at an arbitrary moment (not in step with the batches).
        await until(() => endsOf(hash) >= 4, `episodes of edit ${i}`);
        await new Promise((r) => setTimeout(r, (i * 379) % 1000));
      }
    } finally {
      await reloader.close();
      await client.stop();
      await Promise.all([...opened.values()].map((o) => o.runtime.close()));
      stop.abort();
      await run;
      rmSync(dir, { recursive: true, force: true });
    }
    const steps = events.filter((e) => e.type === "step").length;
    const starts = events.filter((e) => e.type === "start").length;
    const med = median(toEpisode);
    const load = loadavg()[0]!;
    return [
      {
        title: `Save of the reward file -> first episode that ran the new code (${edits} edits, replacing saves, embedded engine training throughout)`,
        columns: ["interval", "median ms", "p90 ms", "max ms"],
        rows: [
          ["save -> new build announced (debounce 100 ms, hash, bundle, isolates)", fmt(median(toReload)), fmt(quantile(toReload, 0.9)), fmt(Math.max(...toReload))],
          ["save -> first episode on the new build assigned", fmt(median(toStart)), fmt(quantile(toStart, 0.9)), fmt(Math.max(...toStart))],
          ["save -> first episode with the new code hash ended", fmt(med), fmt(quantile(toEpisode, 0.9)), fmt(Math.max(...toEpisode))],
        ],
        notes: [
          `target: median under 1000 ms: ${med < 1000 ? "met" : "NOT met"} (${fmt(med)} ms)`,
          `server, weights and optimizer untouched: 1 process, ${starts} start event, ${steps} optimizer steps trained, ${steps - stepsBefore} of them during the edits`,
          `${acrossSync} of ${edits} waits spanned a weight sync (claims pause while the policy trains; episodes already running finish on the old build); machine load average ${load.toFixed(1)} on ${cpus().length} cores`,
        ],
      },
    ];
  },
};
