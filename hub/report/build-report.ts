import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ENVIRONMENT_FAILURE_KINDS, FAILURE_KINDS, isFailureKind } from "../../sdk/failure-kinds.ts";
import type { EvalEvent, RunEvent, StepEvent } from "../train/events.ts";
import { type CodeVersionRow, rewardsByCodeVersion } from "./code-versions.ts";
import { type LineChart, type Point, renderChartSvg } from "./plots.ts";
import { readMetrics } from "./read-metrics.ts";

export interface ReportSummary {
  steps: number;
  /** Mean reward per environment over the first and last quarter of steps. */
  rewardFirst: Record<string, number>;
  rewardLast: Record<string, number>;
  tokenSavings: { callTokens: number; sampleTokens: number; ratio: number };
  failures: Record<string, number>;
  /** Training rewards per (environment, code hash): what each hot-swapped version of an environment scored. */
  codeVersions: CodeVersionRow[];
  /** Groups failed for good and their ended episodes, dropped untrained. */
  failedGroups: { groups: number; episodes: number };
  files: string[];
}

/** Writes report.html and plots/*.svg for a run directory from its metrics.jsonl. */
export async function buildReport(runDir: string): Promise<ReportSummary> {
  const { events } = readMetrics(join(runDir, "metrics.jsonl"));
  const steps = events.filter((e): e is StepEvent => e.type === "step");
  const evals = events.filter((e): e is EvalEvent => e.type === "eval");
  const charts = chartsFor(steps, evals);
  const plotDir = join(runDir, "plots");
  mkdirSync(plotDir, { recursive: true });
  const files: string[] = [];
  const svgs: Array<{ chart: LineChart; svg: string; file: string }> = [];
  for (const [slug, chart] of Object.entries(charts)) {
    const svg = await renderChartSvg(chart);
    const file = join(plotDir, `${slug}.svg`);
    writeFileSync(file, svg);
    files.push(file);
    svgs.push({ chart, svg, file: `plots/${slug}.svg` });
  }
  const tails = events.flatMap((e) => (e.type === "end" ? [{ failures: e.failures ?? {}, failedGroups: e.failedGroups ?? { groups: 0, episodes: 0 } }] : []));
  const summary = summarise(steps, files, rewardsByCodeVersion(events), tails);
  const html = renderHtml(events, summary, evals, svgs);
  const reportPath = join(runDir, "report.html");
  writeFileSync(reportPath, html);
  summary.files.push(reportPath);
  return summary;
}

function chartsFor(steps: readonly StepEvent[], evals: readonly EvalEvent[]): Record<string, LineChart> {
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
  const evalPoints = evals.map((e) => ({ x: e.step, y: e.meanReward, series: `${e.env} (${e.split})` }));
  return {
    "reward-per-env": { title: "Mean reward per environment", xTitle: "step", yTitle: "mean reward", points: reward },
    "success-per-env": { title: "Success rate per environment", xTitle: "step", yTitle: "success", points: success },
    "success-per-role": { title: "Success rate of trained agents per role", xTitle: "step", yTitle: "success", points: roleSuccess },
    "reward-per-policy": { title: "Mean reward per policy", xTitle: "step", yTitle: "mean reward", points: policy },
    "eval-reward": { title: "Evaluation reward", xTitle: "step", yTitle: "mean reward", points: evalPoints },
    "training-tokens": { title: "Training tokens: unmerged vs merged", xTitle: "step", yTitle: "tokens", points: tokens },
    failures: { title: "Infrastructure failures by kind", xTitle: "step", yTitle: "episodes", points: failures, stacked: true },
  };
}

function meanOver(steps: readonly StepEvent[]): Record<string, number> {
  const sums: Record<string, { total: number; n: number }> = {};
  for (const s of steps) {
    for (const [env, m] of Object.entries(s.perEnv)) {
      const acc = (sums[env] ??= { total: 0, n: 0 });
      acc.total += m.meanReward * m.episodes;
      acc.n += m.episodes;
    }
  }
  return Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, v.n ? v.total / v.n : 0]));
}

/** `tails`: each session's failures after its last step (its `end` event), so the totals are the run's. */
function summarise(
  steps: readonly StepEvent[],
  files: string[],
  codeVersions: CodeVersionRow[],
  tails: ReadonlyArray<{ failures: Record<string, number>; failedGroups: { groups: number; episodes: number } }>,
): ReportSummary {
  const q = Math.max(1, Math.floor(steps.length / 4));
  const callTokens = steps.reduce((a, s) => a + s.merging.callTokens, 0);
  const sampleTokens = steps.reduce((a, s) => a + s.merging.sampleTokens, 0);
  const failures: Record<string, number> = {};
  for (const s of [...steps, ...tails]) for (const [k, n] of Object.entries(s.failures)) failures[k] = (failures[k] ?? 0) + n;
  const groups = [...steps.map((s) => s.failedGroups ?? { groups: 0, episodes: 0 }), ...tails.map((t) => t.failedGroups)];
  return {
    steps: steps.length,
    rewardFirst: meanOver(steps.slice(0, q)),
    rewardLast: meanOver(steps.slice(-q)),
    tokenSavings: { callTokens, sampleTokens, ratio: callTokens ? sampleTokens / callTokens : 1 },
    failures,
    codeVersions,
    failedGroups: {
      groups: groups.reduce((a, g) => a + g.groups, 0),
      episodes: groups.reduce((a, g) => a + g.episodes, 0),
    },
    files,
  };
}

const esc = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

function renderHtml(
  events: readonly RunEvent[],
  summary: ReportSummary,
  evals: readonly EvalEvent[],
  svgs: ReadonlyArray<{ chart: LineChart; svg: string; file: string }>,
): string {
  const start = events.find((e) => e.type === "start");
  const end = events.findLast((e) => e.type === "end");
  const envRows = Object.keys(summary.rewardLast)
    .map(
      (env) =>
        `<tr><td>${esc(env)}</td><td>${(summary.rewardFirst[env] ?? 0).toFixed(3)}</td><td>${(summary.rewardLast[env] ?? 0).toFixed(3)}</td></tr>`,
    )
    .join("");
  const evalRows = evals
    .map(
      (e) =>
        `<tr><td>${e.step}</td><td>${esc(e.env)}</td><td>${esc(e.split)}</td><td>${e.episodes}</td><td>${e.meanReward.toFixed(3)}</td><td>${e.success.toFixed(3)}</td></tr>`,
    )
    .join("");
  const failRows = Object.entries(summary.failures)
    .map(([k, n]) => `<tr><td>${esc(k)}</td><td>${n}</td><td style="text-align:left">${esc(isFailureKind(k) ? FAILURE_KINDS[k] : "")}</td></tr>`)
    .join("");
  const codeRows = summary.codeVersions
    .map(
      (r) =>
        `<tr><td>${esc(r.env)}</td><td><code>${esc(r.hash.slice(0, 12))}</code>${r.dev ? " (dev)" : ""}</td><td>${r.firstStep}-${r.lastStep}</td><td>${r.episodes}</td><td>${r.meanReward.toFixed(3)}</td></tr>`,
    )
    .join("");
  const t = summary.tokenSavings;
  const charts = svgs
    .filter((s) => s.chart.points.length > 0)
    .map((s) => `<figure>${s.svg}<figcaption><a href="${s.file}">${esc(s.chart.title)}</a></figcaption></figure>`)
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>agentjet report</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:1200px}table{border-collapse:collapse;margin:1rem 0}
td,th{border:1px solid #ccc;padding:.25rem .6rem;text-align:right}th{background:#f4f4f4}figure{display:inline-block;margin:.5rem}</style>
</head><body>
<h1>agentjet run report</h1>
<p>Run <code>${esc(start?.type === "start" ? start.runDir : "")}</code>, ${summary.steps} steps${end?.type === "end" ? `, ended: ${esc(end.reason)}` : ""}.</p>
<h2>Reward per environment</h2>
<table><tr><th>environment</th><th>first quarter</th><th>last quarter</th></tr>${envRows}</table>
<h2>Reward by code version</h2>
${codeRows ? `<table><tr><th>environment</th><th>code hash</th><th>steps</th><th>episodes</th><th>mean reward</th></tr>${codeRows}</table>` : "<p>No episode records in this run.</p>"}
<h2>Token savings from timeline merging</h2>
<p>${t.callTokens} tokens as separate calls, ${t.sampleTokens} as merged samples (ratio ${t.ratio.toFixed(3)}).</p>
<h2>Evaluation</h2>
${evalRows ? `<table><tr><th>step</th><th>environment</th><th>split</th><th>episodes</th><th>mean reward</th><th>success</th></tr>${evalRows}</table>` : "<p>No evaluation in this run.</p>"}
<h2>Failures</h2>
${failRows ? `<table><tr><th>kind</th><th>episodes</th><th>cause</th></tr>${failRows}</table>` : "<p>No infrastructure failures.</p>"}
<p>${summary.failedGroups.groups} group(s) failed for good (a member ran out of retries); their ${summary.failedGroups.episodes} ended episode(s) left the pool untrained.</p>
<h2>Curves</h2>
${charts}
</body></html>
`;
}
