import { existsSync } from "node:fs";
import { join } from "node:path";
import { readMetrics } from "../report/read-metrics.ts";
import type { EvalEvent, RunEvent, StepEvent } from "../train/events.ts";
import type { Campaign, RunStatus } from "./campaign.ts";
import type { ConfigSummary, FinalMetrics, RunSummary, Spread, SweepSummary } from "./events.ts";

/** A run directory's events (none when it has no metrics.jsonl yet). */
export function readRunEvents(runDir: string): RunEvent[] {
  const file = join(runDir, "metrics.jsonl");
  return existsSync(file) ? readMetrics(file).events : [];
}

/** Held-out success of the last evaluation in `mode` (mean over the environments evaluated at that step). */
function lastSuccess(evals: readonly EvalEvent[], mode: "greedy" | "sampled"): number | null {
  const mine = evals.filter((e) => (e.mode ?? "sampled") === mode && e.stage !== "init");
  const last = mine.at(-1);
  if (!last) return null;
  const atLast = mine.filter((e) => e.step === last.step);
  const byEnv = new Map(atLast.map((e) => [e.env, e.success]));
  return [...byEnv.values()].reduce((a, b) => a + b, 0) / byEnv.size;
}

/** What a run ended at: held-out success (greedy, sampled) and the training reward of its last quarter of steps. */
export function finalMetrics(events: readonly RunEvent[]): FinalMetrics {
  const evals = events.filter((e): e is EvalEvent => e.type === "eval");
  const steps = events.filter((e): e is StepEvent => e.type === "step");
  const tail = steps.slice(-Math.max(1, Math.floor(steps.length / 4)));
  let total = 0;
  let n = 0;
  for (const s of tail) {
    for (const m of Object.values(s.perEnv)) {
      total += m.meanReward * m.episodes;
      n += m.episodes;
    }
  }
  return { greedy: lastSuccess(evals, "greedy"), sampled: lastSuccess(evals, "sampled"), reward: n > 0 ? total / n : null, steps: steps.length };
}

/** Mean, sample standard deviation (0 for one value), min and max; null for no values. */
export function spread(xs: readonly number[]): Spread | null {
  if (xs.length === 0) return null;
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.length > 1 ? xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1) : 0;
  return { mean, std: Math.sqrt(variance), min: Math.min(...xs), max: Math.max(...xs), n: xs.length };
}

const RANK_BY = ["greedy", "sampled", "reward"] as const;

/** Higher mean first on the first metric any config has, then the next ones; configs without it last. */
function rank(configs: ConfigSummary[]): { sorted: ConfigSummary[]; by: (typeof RANK_BY)[number] | null } {
  const by = RANK_BY.find((m) => configs.some((c) => c[m] !== null)) ?? null;
  const order = by === null ? [] : RANK_BY.slice(RANK_BY.indexOf(by));
  const sorted = [...configs].sort((a, b) => {
    for (const m of order) {
      const x = a[m]?.mean ?? -Infinity;
      const y = b[m]?.mean ?? -Infinity;
      if (x !== y) return y - x;
    }
    return 0;
  });
  return { sorted, by };
}

/**
 * Compares a campaign's runs: each run's final metrics, and per config (its seeds together) their mean
 * and spread over the runs that are done, best first. `events` holds each run's events by id.
 */
export function compareRuns(dir: string, campaign: Campaign, events: ReadonlyMap<string, readonly RunEvent[]>, report: string): SweepSummary {
  const runs: RunSummary[] = campaign.runs.map((r) => {
    const ev = events.get(r.id) ?? [];
    return {
      id: r.id,
      label: r.label,
      configKey: r.configKey,
      params: r.params,
      seed: r.seed,
      status: r.status,
      exitCode: r.exitCode,
      runDir: r.runDir,
      final: ev.length > 0 ? finalMetrics(ev) : null,
    };
  });
  const keys = [...new Set(runs.map((r) => r.configKey))];
  const configs = keys.map((configKey): ConfigSummary => {
    const mine = runs.filter((r) => r.configKey === configKey);
    const done = mine.filter((r) => r.status === "done" && r.final !== null);
    const values = (m: (typeof RANK_BY)[number]): number[] => done.flatMap((r) => (r.final![m] === null ? [] : [r.final![m]!]));
    return {
      configKey,
      label: mine[0]!.label,
      params: mine[0]!.params,
      runs: mine.map((r) => r.id),
      seeds: mine.map((r) => r.seed),
      done: done.length,
      greedy: spread(values("greedy")),
      sampled: spread(values("sampled")),
      reward: spread(values("reward")),
    };
  });
  const { sorted, by } = rank(configs);
  const top = sorted[0];
  const counts = Object.fromEntries((["pending", "running", "done", "failed", "interrupted"] as const).map((s) => [s, runs.filter((r) => r.status === s).length])) as Record<RunStatus, number>;
  return {
    name: campaign.name,
    campaignDir: dir,
    time: new Date().toISOString(),
    counts,
    runs,
    configs: sorted,
    best: by !== null && top && top[by] !== null ? { configKey: top.configKey, label: top.label, params: top.params, by, mean: top[by]!.mean } : null,
    report,
  };
}
