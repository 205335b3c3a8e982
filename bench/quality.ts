import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { readMetrics } from "../hub/report/read-metrics.ts";
import type { StepEvent } from "../hub/train/events.ts";
import { policyCheckpointDir, readLatestCheckpoint } from "../hub/train/checkpoint.ts";
import { runTraining } from "../hub/train/run-training.ts";
import { loadRunConfig, type RunConfig } from "../server/config/index.ts";
import { appendHistory, baselineFor, compareFingerprints, type QualityEntry, type QualityFingerprint, readHistory } from "./quality-history.ts";

/**
 * Training quality across commits (`npm run bench:quality`): short deterministic training runs
 * (`run.deterministic: true`) whose fingerprint (rewards per step and environment, sha256 of the final
 * weights) is the same on every machine for the same code. Each run's fingerprint is appended to
 * bench/history/quality.jsonl under the commit, and compared with the last entry at another commit.
 */

const REPO = resolve(import.meta.dirname, "..");
export const HISTORY = join(REPO, "bench", "history", "quality.jsonl");
const QUIET = { event: () => undefined, fill: () => undefined, close: () => undefined };

/** One run of the suite: an example config, cut down to a few deterministic steps. */
export interface QualityRun {
  name: string;
  example: string;
  steps: number;
  /** Warm-start steps before RL (0: none), so RL starts from a policy that earns some reward. */
  warmSteps: number;
  model: { layers: number; dim: number; heads: number; context: number };
  batchTasks: number;
  groupSize: number;
}

/**
 * The suite: arith alone (the quickstart), the arith + countdown cocktail, and tic-tac-toe self-play
 * (multi-agent: two seats of one policy in every episode). Werewolves is not in it (see bench/README.md).
 */
export const QUALITY_RUNS: readonly QualityRun[] = [
  { name: "arith", example: "quickstart", steps: 6, warmSteps: 150, model: { layers: 1, dim: 32, heads: 4, context: 64 }, batchTasks: 8, groupSize: 4 },
  { name: "cocktail", example: "cpu-cocktail", steps: 6, warmSteps: 150, model: { layers: 1, dim: 32, heads: 4, context: 64 }, batchTasks: 8, groupSize: 4 },
  { name: "tictactoe", example: "tictactoe-selfplay", steps: 4, warmSteps: 100, model: { layers: 1, dim: 32, heads: 4, context: 256 }, batchTasks: 4, groupSize: 4 },
];

async function quickConfig(r: QualityRun): Promise<RunConfig> {
  const loaded = await loadRunConfig(join(REPO, "examples", `${r.example}.yaml`));
  if (loaded.kind !== "ok") throw new Error(`examples/${r.example}.yaml does not load: ${JSON.stringify(loaded)}`);
  const c = loaded.config;
  c.run = { ...c.run, seed: 1, steps: r.steps, checkpointEvery: r.steps, deterministic: true };
  c.policies.main!.engine = { kind: "embedded", model: { ...r.model, seed: 1 } };
  if (r.warmSteps > 0 && c.warmStart) c.warmStart = { ...c.warmStart, steps: r.warmSteps, logEvery: r.warmSteps };
  else delete c.warmStart;
  c.eval.every = 0;
  c.batching = { ...c.batching, batchTasks: r.batchTasks, groupSize: r.groupSize, filterEqualRewards: false };
  c.clients = { local: 1, concurrency: 8 };
  return c;
}

/** Mean rewards at 1e-6: the step's mean sums episodes in arrival order, which moves the last float bits between identical runs. */
const r6 = (x: number): number => Math.round(x * 1e6) / 1e6;

function weightsSha256(runDir: string): string {
  const latest = readLatestCheckpoint(runDir);
  if (latest.kind !== "ok") throw new Error(`${runDir}: no checkpoint (${latest.why})`);
  return createHash("sha256").update(readFileSync(join(policyCheckpointDir(latest.dir, "main"), "weights.f32"))).digest("hex");
}

/** Trains one run of the suite in a temp folder and returns its fingerprint; throws when the run does not finish. */
export async function qualityFingerprint(r: QualityRun): Promise<QualityFingerprint> {
  const config = await quickConfig(r);
  const project = mkdtempSync(join(tmpdir(), "aj-bench-quality-"));
  const runDir = join(project, "run");
  const t0 = performance.now();
  try {
    const result = await runTraining({ config, runDir, projectDir: project, port: 0, progress: QUIET, report: false });
    const wallS = (performance.now() - t0) / 1000;
    if (result.reason !== "done") throw new Error(`quality run ${r.name} ended ${result.reason} at step ${result.step}`);
    const steps = readMetrics(join(runDir, "metrics.jsonl"))
      .events.filter((e): e is StepEvent => e.type === "step")
      .sort((a, b) => a.step - b.step);
    const curve: Record<string, number[]> = {};
    for (const s of steps) for (const [env, m] of Object.entries(s.perEnv)) (curve[env] ??= []).push(r6(m.meanReward));
    const last = steps.at(-1);
    const final = Object.fromEntries(Object.entries(last?.perEnv ?? {}).map(([env, m]) => [env, { meanReward: r6(m.meanReward), success: r6(m.success) }]));
    return { run: r.name, steps: result.step, final, curve, weightsSha256: weightsSha256(runDir), wallS };
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
}

function git(args: string[]): string {
  return execFileSync("git", args, { cwd: REPO, encoding: "utf8" }).trim();
}

/** The commit measured and whether the tree had other changes (the history file itself does not count). */
export function commitKey(): { commit: string; dirty: boolean } {
  return { commit: git(["rev-parse", "HEAD"]), dirty: git(["status", "--porcelain", "--", ".", ":!bench/history"]) !== "" };
}

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const runs = QUALITY_RUNS.filter((r) => only.length === 0 || only.includes(r.name));
  const key = commitKey();
  console.log(`bench:quality at ${key.commit.slice(0, 12)}${key.dirty ? " (dirty)" : ""}, load ${loadavg()[0]!.toFixed(1)}, ${runs.length} runs`);
  const history = readHistory(HISTORY);
  for (const r of runs) {
    console.log(`  ${r.name}: ${r.example}, ${r.warmSteps} warm-start + ${r.steps} RL steps, deterministic ...`);
    const fp = await qualityFingerprint(r);
    const entry: QualityEntry = { ...fp, ...key, time: new Date().toISOString() };
    const finals = Object.entries(fp.final).map(([env, m]) => `${env} reward ${m.meanReward.toFixed(3)} success ${(m.success * 100).toFixed(1)}%`);
    console.log(`  ${r.name}: ${fp.wallS.toFixed(1)} s, ${finals.join(", ")}, weights ${fp.weightsSha256.slice(0, 16)}`);
    const base = baselineFor(history, entry);
    if (!base) console.log(`  ${r.name}: no earlier entry to compare with`);
    else {
      const { changed, weightsChanged } = compareFingerprints(base, fp);
      const at = `${base.commit.slice(0, 12)}${base.dirty ? " (dirty)" : ""} ${base.time}`;
      if (changed.length === 0) console.log(`  ${r.name}: identical to ${at} (weights hash unchanged)`);
      else {
        console.log(`  ${r.name}: vs ${at}:${weightsChanged ? "" : " weights hash unchanged;"}`);
        for (const line of changed) console.log(`    ${line}`);
      }
      console.log(`    wall time: ${base.wallS.toFixed(1)} s -> ${fp.wallS.toFixed(1)} s`);
    }
    appendHistory(HISTORY, entry);
  }
  console.log(`bench:quality: appended ${runs.length} entries to ${HISTORY}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e: unknown) => {
    console.error(`bench:quality: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
}
