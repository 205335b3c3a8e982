import type { EvalEvent, RunEvent, StepEvent } from "../train/events.ts";
import { type EvalFailure, evalFailures } from "./eval-failures.ts";

export type SkillMode = "greedy" | "sampled";

/** Success of one environment in one eval mode: where it started (the first evaluation) and where it ended (the last). */
export interface SkillRange {
  first: number;
  last: number;
  firstStep: number;
  lastStep: number;
  /** The first evaluation was of the weights before the warm-start. */
  firstBeforeWarmStart: boolean;
  episodes: number;
}

export interface SkillSummary {
  /** Every environment of the run, in its order, with what was measured of it (nothing: no evaluation ran). */
  perEnv: Record<string, Partial<Record<SkillMode, SkillRange>>>;
  /** Why the numbers should not be read as progress: a collapsed policy, filtered groups. Empty when none. */
  warnings: string[];
  /** Share of groups dropped by the equal-rewards filter over the last quarter of steps (null: not recorded). */
  filteredShare: number | null;
  /** One line per environment: the headline of the terminal and the report. */
  headline: string[];
  /** Evaluations that were due but did not finish, in order (none: every one finished, or none was due). */
  failedEvals: EvalFailure[];
}

/** Past this share of filtered groups (last quarter of steps), a run's curves say little: flagged. */
export const FILTERED_WARN_SHARE = 0.5;

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

/** The mode of an eval event (runs written before both modes were measured evaluated at the sampling temperature). */
function modeOf(e: EvalEvent): SkillMode {
  return e.mode ?? "sampled";
}

/** The first failed evaluation in words, and how many more failed. */
function failedText(failed: readonly EvalFailure[]): string {
  const f = failed[0]!;
  return `evaluation at step ${f.step} failed: ${f.error}${failed.length > 1 ? `; ${failed.length - 1} later one(s) failed too` : ""}`;
}

/** What a run's events say about skill: success per environment and mode, first to last, and what makes it doubtful. */
export function summariseSkill(events: readonly RunEvent[]): SkillSummary {
  const start = events.find((e) => e.type === "start");
  const evals = events.filter((e): e is EvalEvent => e.type === "eval");
  const steps = events.filter((e): e is StepEvent => e.type === "step");
  // An evaluation that was asked for but failed is not "no evaluation set".
  const failedEvals = evalFailures(events);
  const noEval = failedEvals.length ? `no evaluation finished (${failedText(failedEvals)})` : "no evaluation ran (set eval.every to measure success)";
  const envs = [...new Set([...(start?.type === "start" ? start.environments : []), ...evals.map((e) => e.env), ...steps.flatMap((s) => Object.keys(s.perEnv))])];
  const perEnv: SkillSummary["perEnv"] = {};
  const warnings: string[] = [];
  const headline: string[] = [];
  for (const env of envs) {
    const mine = evals.filter((e) => e.env === env);
    const ranges: Partial<Record<SkillMode, SkillRange>> = {};
    for (const mode of ["greedy", "sampled"] as const) {
      const m = mine.filter((e) => modeOf(e) === mode);
      const first = m[0];
      const last = m.at(-1);
      if (!first || !last) continue;
      ranges[mode] = {
        first: first.success,
        last: last.success,
        firstStep: first.step,
        lastStep: last.step,
        firstBeforeWarmStart: first.stage === "init",
        episodes: last.episodes,
      };
      if (last.collapsed) {
        warnings.push(
          `${env}: the policy collapsed (${mode}): '${last.topAnswer ?? ""}' is its answer to ${pct(last.topAnswerShare ?? 0)} of the eval inputs, success ${pct(last.success)}`,
        );
      }
    }
    perEnv[env] = ranges;
    const parts = (["greedy", "sampled"] as const).flatMap((mode) => {
      const r = ranges[mode];
      return r ? [`${mode} ${pct(r.first)} -> ${pct(r.last)}`] : [];
    });
    const from = ranges.greedy?.firstBeforeWarmStart || ranges.sampled?.firstBeforeWarmStart ? " (from before the warm-start)" : "";
    headline.push(parts.length ? `${env}: success ${parts.join(", ")}${from}` : `${env}: ${noEval}`);
  }
  const q = steps.slice(-Math.max(1, Math.floor(steps.length / 4)));
  const withGroups = q.filter((s) => s.trainedGroups !== undefined);
  let filteredShare: number | null = null;
  if (withGroups.length > 0) {
    const filtered = withGroups.reduce((a, s) => a + s.filteredGroups, 0);
    const total = filtered + withGroups.reduce((a, s) => a + (s.trainedGroups ?? 0), 0);
    filteredShare = total ? filtered / total : 0;
    if (filteredShare >= FILTERED_WARN_SHARE) {
      warnings.push(`${pct(filteredShare)} of the groups of the last quarter of steps were filtered (equal rewards): most batches teach nothing`);
    }
  }
  return { perEnv, warnings, filteredShare, headline, failedEvals };
}
