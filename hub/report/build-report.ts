import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FAILURE_KINDS, isFailureKind } from "../../sdk/failure-kinds.ts";
import type { EvalEvent, RunEvent, StepEvent, WarmStartEvent } from "../train/events.ts";
import { type CodeVersionRow, rewardsByCodeVersion } from "./code-versions.ts";
import type { EvalFailure } from "./eval-failures.ts";
import { chartsFor } from "./charts.ts";
import { type LineChart, renderChartSvg } from "./plots.ts";
import { readMetrics } from "./read-metrics.ts";
import { type RewardPartRow, rewardPartRows } from "./reward-parts.ts";
import { type SkillSummary, summariseSkill } from "./skill-summary.ts";

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
  /** Success per environment and eval mode (the headline), and what makes the curves doubtful. */
  skill: SkillSummary;
  /** Reward parts of episodes scored by reward models or judges (empty when none were). */
  rewardParts: RewardPartRow[];
  /** Line numbers of metrics.jsonl that were not read (not JSON, or not a run event): a torn last line, or a damaged file. */
  skippedLines: number[];
  files: string[];
}

/** Writes report.html and plots/*.svg for a run directory from its metrics.jsonl. */
export async function buildReport(runDir: string): Promise<ReportSummary> {
  const { events, skipped } = readMetrics(join(runDir, "metrics.jsonl"));
  const steps = events.filter((e): e is StepEvent => e.type === "step");
  const evals = events.filter((e): e is EvalEvent => e.type === "eval");
  const charts = chartsFor(events);
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
  const summary: ReportSummary = { ...summarise(steps, files, rewardsByCodeVersion(events), tails), skill: summariseSkill(events), rewardParts: rewardPartRows(events), skippedLines: skipped };
  const html = renderHtml(events, summary, evals, svgs);
  const reportPath = join(runDir, "report.html");
  writeFileSync(reportPath, html);
  summary.files.push(reportPath);
  return summary;
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
): Omit<ReportSummary, "skill" | "rewardParts" | "skippedLines"> {
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

const pctCell = (x: number | undefined): string => (x === undefined ? "<td>-</td>" : `<td>${(x * 100).toFixed(1)}%</td>`);

function skillRows(skill: SkillSummary): string {
  return Object.entries(skill.perEnv)
    .map(([env, r]) => {
      const g = r.greedy;
      const sm = r.sampled;
      const from = g?.firstBeforeWarmStart || sm?.firstBeforeWarmStart ? "before warm-start" : g || sm ? `step ${(g ?? sm)!.firstStep}` : "-";
      return `<tr><td>${esc(env)}</td><td>${from}</td>${pctCell(g?.first)}${pctCell(g?.last)}${pctCell(sm?.first)}${pctCell(sm?.last)}<td>${(g ?? sm)?.lastStep ?? "-"}</td></tr>`;
    })
    .join("");
}

/** The warning for lines of metrics.jsonl left out of the report (the terminal's and the page's). */
export function skippedLinesWarning(lines: readonly number[]): string {
  const shown = lines.length > 10 ? `${lines.slice(0, 10).join(", ")}, ...` : lines.join(", ");
  return `metrics.jsonl: ${lines.length} line(s) could not be read and are left out of this report (line ${shown}): the numbers below may be incomplete`;
}

/** A decision rate (invalid or fallback) of all seats asked, then per role when the environment counted roles. */
function decisionRate(d: EvalEvent["decisions"], key: "invalid" | "fallbacks"): string {
  const rate = (n: number, total: number): string => (total > 0 ? `${((n / total) * 100).toFixed(1)}%` : "-");
  if (!d) return "-";
  const roles = Object.entries(d.byRole ?? {}).map(([r, c]) => `${esc(r)} ${rate(c[key], c.total)} of ${c.total}`);
  return rate(d[key], d.total) + (roles.length ? `<br><small>${roles.join("<br>")}</small>` : "");
}

function evalRow(e: EvalEvent): string {
  const d = e.decisions;
  const roles = e.perRole ? Object.entries(e.perRole).map(([r, m]) => `${esc(r)} ${(m.success * 100).toFixed(0)}%`).join(", ") : "";
  return (
    `<tr${e.collapsed ? ' style="background:#fdd"' : ""}><td>${e.step}${e.stage === "init" ? " (before warm-start)" : ""}</td><td>${esc(e.env)}</td><td>${esc(e.split)}</td>` +
    `<td>${esc(e.mode ?? "sampled")}${e.mode === "sampled" || e.mode === undefined ? (e.temperature !== undefined ? ` T=${e.temperature}` : "") : ""}</td><td>${e.episodes}</td>` +
    `<td><b>${(e.success * 100).toFixed(1)}%</b></td><td>${e.meanReward.toFixed(3)}</td>` +
    `<td>${e.topAnswerShare === undefined ? "-" : `${esc(JSON.stringify(e.topAnswer ?? ""))} ${(e.topAnswerShare * 100).toFixed(0)}%`}</td>` +
    `<td>${e.collapsed ? "COLLAPSED" : ""}</td><td>${roles}</td><td>${decisionRate(d, "invalid")}</td><td>${decisionRate(d, "fallbacks")}</td></tr>`
  );
}

function renderHtml(
  events: readonly RunEvent[],
  summary: ReportSummary,
  evals: readonly EvalEvent[],
  svgs: ReadonlyArray<{ chart: LineChart; svg: string; file: string }>,
): string {
  const start = events.find((e) => e.type === "start");
  const end = events.findLast((e) => e.type === "end");
  const warm = events.filter((e): e is WarmStartEvent => e.type === "warm-start");
  const envRows = Object.keys(summary.skill.perEnv)
    .map(
      (env) =>
        `<tr><td>${esc(env)}</td><td>${summary.rewardFirst[env] === undefined ? "-" : summary.rewardFirst[env]!.toFixed(3)}</td><td>${summary.rewardLast[env] === undefined ? "-" : summary.rewardLast[env]!.toFixed(3)}</td></tr>`,
    )
    .join("");
  const evalRows = evals.map(evalRow).join("");
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
  const warnings = [...(summary.skippedLines.length ? [skippedLinesWarning(summary.skippedLines)] : []), ...summary.skill.warnings]
    .map((w) => `<p class="warn">${esc(w)}</p>`)
    .join("\n");
  const lastWarm = new Map(warm.map((w) => [w.policy, w]));
  const warmText = [...lastWarm.values()]
    .map((w) => `${esc(w.policy)}: ${w.steps} supervised steps on ${w.demos} demonstrations in ${(w.elapsedMs / 1000).toFixed(1)} s, final loss ${w.loss.toFixed(3)}, ${(w.demoMatch * 100).toFixed(0)}% replayed`)
    .join("<br>");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>agentjet report</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:1200px}table{border-collapse:collapse;margin:1rem 0}
td,th{border:1px solid #ccc;padding:.25rem .6rem;text-align:right}th{background:#f4f4f4}figure{display:inline-block;margin:.5rem}
.warn{background:#fdd;border-left:4px solid #c00;padding:.5rem}</style>
</head><body>
<h1>agentjet run report</h1>
<p>Run <code>${esc(start?.type === "start" ? start.runDir : "")}</code>, ${summary.steps} steps${end?.type === "end" ? `, ended: ${esc(end.reason)}` : ""}.</p>
<h2>Skill: held-out success</h2>
${warnings}
<p>${summary.skill.headline.map(esc).join("<br>")}</p>
<table><tr><th>environment</th><th>first evaluation</th><th>greedy first</th><th>greedy last</th><th>sampled first</th><th>sampled last</th><th>last step</th></tr>${skillRows(summary.skill)}</table>
<p>Success: the share of held-out episodes whose trained agents reached the environment's top reward. The shaped reward below is what training optimises, not the skill.</p>
${warm.length ? `<h2>Warm-start</h2><p>${warmText}</p>` : ""}
<h2>Reward per environment (training episodes)</h2>
<table><tr><th>environment</th><th>first quarter</th><th>last quarter</th></tr>${envRows}</table>
${rewardPartsSection(summary.rewardParts)}
<h2>Reward by code version</h2>
${codeRows ? `<table><tr><th>environment</th><th>code hash</th><th>steps</th><th>episodes</th><th>mean reward</th></tr>${codeRows}</table>` : "<p>No episode records in this run.</p>"}
<h2>Token savings from timeline merging</h2>
<p>${t.callTokens} tokens as separate calls, ${t.sampleTokens} as merged samples (ratio ${t.ratio.toFixed(3)}).</p>
<h2>Evaluation</h2>
${evalRows ? `<table><tr><th>step</th><th>environment</th><th>split</th><th>mode</th><th>episodes</th><th>success</th><th>mean reward</th><th>top answer</th><th></th><th>per role (success)</th><th>invalid (per role)</th><th>fallback (per role)</th></tr>${evalRows}</table>` : summary.skill.failedEvals.length ? "<p>No evaluation finished in this run.</p>" : "<p>No evaluation in this run.</p>"}
${failedEvalsSection(summary.skill.failedEvals)}
<h2>Failures</h2>
${failRows ? `<table><tr><th>kind</th><th>episodes</th><th>cause</th></tr>${failRows}</table>` : "<p>No infrastructure failures.</p>"}
<p>${summary.failedGroups.groups} group(s) failed for good (a member ran out of retries); their ${summary.failedGroups.episodes} ended episode(s) left the pool untrained.</p>
<h2>Curves</h2>
${charts}
</body></html>
`;
}

/** The evaluations that were due but failed: their step, code and error. */
function failedEvalsSection(failed: readonly EvalFailure[]): string {
  if (failed.length === 0) return "";
  const rows = failed.map((f) => `<tr><td>${f.step}</td><td>${esc(f.code ?? "-")}</td><td style="text-align:left">${esc(f.error)}</td></tr>`).join("");
  return `<p class="warn">${failed.length} evaluation(s) failed: no success was measured at their steps.</p>
<table><tr><th>step</th><th>code</th><th>error</th></tr>${rows}</table>`;
}

/** The reward parts table: what each reward model and judge paid, beside the environment's own reward. */
function rewardPartsSection(rows: readonly RewardPartRow[]): string {
  if (rows.length === 0) return "";
  const body = rows
    .map((r) => `<tr><td>${esc(r.env)}</td><td>${esc(r.part)}</td><td>${r.episodes}</td><td>${r.first.toFixed(3)}</td><td>${r.last.toFixed(3)}</td><td>${r.mean.toFixed(3)}</td></tr>`)
    .join("");
  return `<h2>Reward parts (reward models and judges)</h2>
<table><tr><th>environment</th><th>part</th><th>episodes</th><th>first quarter</th><th>last quarter</th><th>mean</th></tr>${body}</table>
<p><code>env</code> is the environment's own reward; the others are the manifest's <code>rewardModels</code> parts. Each episode's parts and the judges' raw verdicts are in <code>run.db</code> (episodes.metadata.rewardParts).</p>`;
}
