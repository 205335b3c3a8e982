/** The benchmark harness: each benchmark measures side by side and returns tables for RESULTS.md. */

export interface BenchTable {
  title: string;
  columns: string[];
  rows: Array<Array<string | number>>;
  /** Targets and what was met, one line each. */
  notes?: string[];
}

export interface Bench {
  name: string;
  /** Runs the benchmark; `quick` (BENCH_QUICK=1) shrinks it for smoke runs. */
  run(opts: { quick: boolean; log: (line: string) => void }): Promise<BenchTable[]>;
}

export function median(xs: readonly number[]): number {
  return quantile(xs, 0.5);
}

export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}

/** Times `fn` `n` times after `warmup` runs; returns per-run milliseconds. */
export async function timeRuns(n: number, fn: () => unknown, warmup = 3): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

export function fmt(x: number, digits = 3): string {
  if (!Number.isFinite(x)) return String(x);
  return Math.abs(x) >= 100 ? x.toFixed(0) : x.toPrecision(digits);
}

export function renderTables(name: string, tables: readonly BenchTable[]): string {
  const parts = [`## ${name}`, ""];
  for (const t of tables) {
    parts.push(`### ${t.title}`, "", `| ${t.columns.join(" | ")} |`, `|${t.columns.map(() => "---").join("|")}|`);
    for (const r of t.rows) parts.push(`| ${r.join(" | ")} |`);
    parts.push("");
    for (const n of t.notes ?? []) parts.push(`- ${n}`);
    if (t.notes?.length) parts.push("");
  }
  return parts.join("\n");
}
