import { ENVIRONMENT_FAILURE_KINDS } from "../../sdk/failure-kinds.ts";
import type { EvalEvent, RunEvent, StepEvent, WarmStartEvent } from "../train/events.ts";
import type { LineChart, Point } from "./plots.ts";

/**
 * The run's charts from its events, by file slug: the one chart code path of `report.html` and the live
 * dashboard (both render them with `renderChartSvg`).
 */
export function chartsFor(events: readonly RunEvent[]): Record<string, LineChart> {
  const steps = events.filter((e): e is StepEvent => e.type === "step");
  const evals = events.filter((e): e is EvalEvent => e.type === "eval");
  const warm = events.filter((e): e is WarmStartEvent => e.type === "warm-start");
  const reward: Point[] = [];
  const success: Point[] = [];
  const roleSuccess: Point[] = [];
  const policy: Point[] = [];
  const failures: Point[] = [];
  const tokens: Point[] = [];
  for (const s of steps) {
    for (const [env, m] of Object.entries(s.perEnv)) {
      reward.push({ x: s.step, y: m.meanReward, series: env });
      success.push({ x: s.step, y: m.success, series: env });
    }
    for (const [role, m] of Object.entries(s.perRole ?? {})) roleSuccess.push({ x: s.step, y: m.success, series: role });
    for (const [name, m] of Object.entries(s.perPolicy)) policy.push({ x: s.step, y: m.meanReward, series: name });
    const kinds = new Set([...ENVIRONMENT_FAILURE_KINDS, ...Object.keys(s.failures)]);
    for (const k of kinds) failures.push({ x: s.step, y: s.failures[k] ?? 0, series: k });
    tokens.push({ x: s.step, y: s.merging.callTokens, series: "unmerged (per call)" });
    tokens.push({ x: s.step, y: s.merging.sampleTokens, series: "merged samples" });
  }
  // One line per environment, split and mode: greedy and sampled evaluations of one step differ, and
  // the evaluation before the warm-start shares step 0 with the one after it (left out, as above).
  const evalPoints = evals
    .filter((e) => e.stage !== "init")
    .map((e) => ({ x: e.step, y: e.meanReward, series: `${e.env} (${e.split}) ${e.mode ?? "sampled"}` }));
  const evalSuccess = evals
    .filter((e) => e.stage !== "init")
    .map((e) => ({ x: e.step, y: e.success, series: `${e.env} ${e.mode ?? "sampled"}` }));
  const warmLoss = warm.map((e) => ({ x: e.step, y: e.loss, series: `${e.policy} loss (NLL per token)` }));
  const warmMatch = warm.map((e) => ({ x: e.step, y: e.demoMatch, series: `${e.policy} demonstrations replayed` }));
  const filtered = steps
    .filter((s) => s.trainedGroups !== undefined)
    .map((s) => ({ x: s.step, y: s.filteredGroups / Math.max(1, s.filteredGroups + (s.trainedGroups ?? 0)), series: "filtered share" }));
  return {
    "eval-success": { title: "Held-out success: greedy and sampled", xTitle: "RL step", yTitle: "success", points: evalSuccess },
    "warm-start": { title: "Warm-start (supervised) per policy", xTitle: "supervised step", yTitle: "loss / share", points: [...warmLoss, ...warmMatch] },
    "filtered-groups": { title: "Share of groups filtered (equal rewards)", xTitle: "step", yTitle: "share", points: filtered },
    "reward-per-env": { title: "Mean reward per environment", xTitle: "step", yTitle: "mean reward", points: reward },
    "success-per-env": { title: "Success rate per environment", xTitle: "step", yTitle: "success", points: success },
    "success-per-role": { title: "Success rate of trained agents per role", xTitle: "step", yTitle: "success", points: roleSuccess },
    "reward-per-policy": { title: "Mean reward per policy", xTitle: "step", yTitle: "mean reward", points: policy },
    "eval-reward": { title: "Evaluation reward", xTitle: "step", yTitle: "mean reward", points: evalPoints },
    "training-tokens": { title: "Training tokens: unmerged vs merged", xTitle: "step", yTitle: "tokens", points: tokens },
    failures: { title: "Infrastructure failures by kind", xTitle: "step", yTitle: "episodes", points: failures, stacked: true },
  };
}
