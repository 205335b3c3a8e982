import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chartsFor } from "../report/charts.ts";
import { type LineChart, type Point, renderChartSvg } from "../report/plots.ts";
import type { RunEvent } from "../train/events.ts";
import { type Campaign, type CampaignRun, readCampaign } from "./campaign.ts";
import { compareRuns, readRunEvents } from "./compare-runs.ts";
import type { Spread, SweepSummary } from "./events.ts";

/** The run report's charts a sweep overlays, one line per run (eval success split by mode: one chart each). */
const OVERLAYS: ReadonlyArray<{ slug: string; from: string; title?: string; keep?: (series: string) => boolean }> = [
  { slug: "eval-success-greedy", from: "eval-success", title: "Held-out success, greedy", keep: (s) => s.endsWith(" greedy") },
  { slug: "eval-success-sampled", from: "eval-success", title: "Held-out success, sampled", keep: (s) => s.endsWith(" sampled") },
  { slug: "reward-per-env", from: "reward-per-env" },
  { slug: "success-per-env", from: "success-per-env" },
  { slug: "reward-per-policy", from: "reward-per-policy" },
  { slug: "eval-reward", from: "eval-reward" },
  { slug: "warm-start", from: "warm-start" },
];

/**
 * Each overlay from every run's own charts (hub/report's chartsFor): a line per run, named by its id,
 * and by `id: series` where the runs' charts have more than one series (environments, policies).
 */
export function overlayCharts(runs: readonly CampaignRun[], events: ReadonlyMap<string, readonly RunEvent[]>): Record<string, LineChart> {
  const perRun = runs.map((r) => ({ id: r.id, charts: chartsFor(events.get(r.id) ?? []) }));
  const out: Record<string, LineChart> = {};
  for (const o of OVERLAYS) {
    const parts = perRun.map(({ id, charts }) => {
      const chart = charts[o.from];
      return { id, chart, points: (chart?.points ?? []).filter((p) => o.keep?.(p.series) ?? true) };
    });
    const names = new Set(parts.flatMap((p) => p.points.map((q) => q.series)));
    if (names.size === 0) continue;
    const one = names.size === 1 ? [...names][0]! : null;
    const points: Point[] = parts.flatMap((p) => p.points.map((q) => ({ x: q.x, y: q.y, series: one !== null ? p.id : `${p.id}: ${q.series}` })));
    const template = parts.find((p) => p.chart)!.chart!;
    out[o.slug] = { title: `${o.title ?? template.title}${one !== null ? ` (${one})` : ""}`, xTitle: template.xTitle, yTitle: template.yTitle, points };
  }
  return out;
}

const esc = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const pct = (x: number | null | undefined): string => (x === null || x === undefined ? "-" : `${(x * 100).toFixed(1)}%`);
const num = (x: number | null | undefined): string => (x === null || x === undefined ? "-" : x.toFixed(3));

function spreadCell(s: Spread | null, f: (x: number) => string): string {
  if (s === null) return "<td>-</td>";
  return `<td><b>${f(s.mean)}</b>${s.n > 1 ? ` &plusmn; ${f(s.std)}<br><small>${f(s.min)} to ${f(s.max)}, n=${s.n}</small>` : " <small>n=1</small>"}</td>`;
}

function renderHtml(summary: SweepSummary, campaign: Campaign, dir: string, figures: string): string {
  const best = summary.best;
  const configRows = summary.configs
    .map(
      (c, i) =>
        `<tr${best && c.configKey === best.configKey ? ' class="best"' : ""}><td>${i + 1}</td><td style="text-align:left">${esc(c.label)}</td><td>${c.done}/${c.runs.length}</td><td>${c.seeds.join(", ")}</td>` +
        `${spreadCell(c.greedy, pct)}${spreadCell(c.sampled, pct)}${spreadCell(c.reward, num)}</tr>`,
    )
    .join("");
  const runRows = summary.runs
    .map((r) => {
      const report = join(r.runDir, "report.html");
      const id = existsSync(join(dir, report)) ? `<a href="${esc(report)}">${esc(r.id)}</a>` : esc(r.id);
      return (
        `<tr><td style="text-align:left">${id}</td><td style="text-align:left">${esc(r.label)}</td><td>${r.seed}</td><td class="${r.status}">${r.status}</td><td>${r.exitCode ?? "-"}</td>` +
        `<td>${r.final?.steps ?? "-"}</td><td>${pct(r.final?.greedy)}</td><td>${pct(r.final?.sampled)}</td><td>${num(r.final?.reward)}</td></tr>`
      );
    })
    .join("");
  const c = summary.counts;
  const bestText = best
    ? `<p class="bestline">Best config: <b>${esc(best.label)}</b>, by mean ${best.by === "reward" ? "final training reward" : `${best.by} held-out success`} ${best.by === "reward" ? num(best.mean) : pct(best.mean)} over its seeds.</p>`
    : "<p>No run is done yet: no best config.</p>";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>agentjet sweep ${esc(campaign.name)}</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:1300px}table{border-collapse:collapse;margin:1rem 0}
td,th{border:1px solid #ccc;padding:.25rem .6rem;text-align:right;vertical-align:top}th{background:#f4f4f4}figure{display:inline-block;margin:.5rem}
tr.best{background:#e6f6e6}.failed{color:#c00}.interrupted,.running,.pending{color:#a60}.bestline{font-size:1.1rem}</style>
</head><body>
<h1>agentjet sweep: ${esc(campaign.name)}</h1>
<p>Campaign <code>${esc(dir)}</code> from <code>${esc(campaign.sweepFile)}</code>: ${summary.runs.length} runs, ${c.done} done, ${c.failed} failed, ${c.interrupted + c.running} interrupted, ${c.pending} pending.</p>
${bestText}
<h2>Configs, best first</h2>
<table><tr><th>#</th><th>config</th><th>runs done</th><th>seeds</th><th>held-out success, greedy</th><th>held-out success, sampled</th><th>final reward</th></tr>${configRows}</table>
<p>Each config's runs that are done, over its seeds: mean &plusmn; sample standard deviation, min to max. Held-out success: the last evaluation of the run (mean over its environments); final reward: mean training reward of the last quarter of its steps.</p>
<h2>Runs</h2>
<table><tr><th>run</th><th>config</th><th>seed</th><th>status</th><th>exit</th><th>steps</th><th>greedy</th><th>sampled</th><th>final reward</th></tr>${runRows}</table>
<h2>Curves, one line per run</h2>
${figures || "<p>No run has written metrics yet.</p>"}
</body></html>
`;
}

/** Writes a campaign directory's report.html, plots/*.svg and summary.json from its runs' metrics.jsonl. */
export async function buildSweepReport(dir: string, campaign: Campaign = readCampaign(dir)): Promise<SweepSummary> {
  const events = new Map(campaign.runs.map((r) => [r.id, readRunEvents(join(dir, r.runDir))]));
  const reportPath = join(dir, "report.html");
  const summary = compareRuns(dir, campaign, events, reportPath);
  const plotDir = join(dir, "plots");
  mkdirSync(plotDir, { recursive: true });
  const figures: string[] = [];
  for (const [slug, chart] of Object.entries(overlayCharts(campaign.runs, events))) {
    const svg = await renderChartSvg(chart);
    writeFileSync(join(plotDir, `${slug}.svg`), svg);
    figures.push(`<figure>${svg}<figcaption><a href="plots/${slug}.svg">${esc(chart.title)}</a></figcaption></figure>`);
  }
  writeAtomically(reportPath, renderHtml(summary, campaign, dir, figures.join("\n")));
  writeAtomically(join(dir, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
  return summary;
}

function writeAtomically(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}
