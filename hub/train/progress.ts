import type { EvalEvent, RunEvent, StepEvent } from "./events.ts";

/** Where a run's events are shown: a live status on a TTY, plain log lines elsewhere, or JSON lines. */
export type ProgressMode = "tty" | "plain" | "json";

export interface ProgressSink {
  event(e: RunEvent): void;
  /** Live fill of the batch being collected, per environment (TTY only; ignored elsewhere). */
  fill(status: FillStatus): void;
  close(): void;
}

export interface FillStatus {
  step: number;
  steps: number;
  version: number;
  phase: "collecting" | "training" | "stopping";
  /** Finished episodes per environment towards this batch, the target, and their mean reward and success so far. */
  perEnv: Record<string, { done: number; target: number; meanReward?: number; success?: number }>;
  /** Failed episode attempts by kind since the last step. */
  failures: Record<string, number>;
  episodesPerS: number;
  etaS: number | null;
}

/** ` failures crash:1,timeout:2` after `sep`, or "" when nothing failed. */
function formatFailures(failures: Record<string, number>, sep: string): string {
  const fails = Object.entries(failures).filter(([, n]) => n > 0);
  return fails.length ? `${sep}failures ${fails.map(([k, n]) => `${k}:${n}`).join(",")}` : "";
}

export function formatStep(e: StepEvent, steps: number): string {
  const envs = Object.entries(e.perEnv)
    .map(([env, m]) => `${env} r=${m.meanReward.toFixed(3)} ok=${(m.success * 100).toFixed(0)}% n=${m.episodes}`)
    .join("  ");
  const failText = formatFailures(e.failures, "  ");
  const saved = e.merging.callTokens ? ` merge ${(e.merging.sampleTokens / e.merging.callTokens).toFixed(2)}x` : "";
  const trees = Object.values(e.perPolicy).filter((p) => p.treeTokens !== undefined);
  const treeText = trees.length
    ? ` tree ${(trees.reduce((a, p) => a + p.treeTokens!, 0) / Math.max(1, trees.reduce((a, p) => a + p.tokens, 0))).toFixed(2)}x`
    : "";
  return `step ${e.step}/${steps} v${e.version}  ${envs}  filtered ${e.filteredGroups}${failText}  ${e.episodesPerS.toFixed(1)} ep/s${saved}${treeText}  ${(e.durationMs / 1000).toFixed(1)}s`;
}

function formatEvent(e: RunEvent, steps: number): string | null {
  switch (e.type) {
    case "start":
      return `train: ${e.runDir}: ${e.steps} step${e.steps === 1 ? "" : "s"}, policies ${e.policies.join(", ")}, environments ${e.environments.join(", ")}${e.resumedFrom !== undefined ? ` (resumed at step ${e.resumedFrom})` : ""}`;
    case "step":
      return formatStep(e, steps);
    case "eval":
      return formatEval(e);
    case "warm-start":
      return `warm-start ${e.policy} ${e.step}/${e.steps}: loss ${e.loss.toFixed(3)} demos replayed ${(e.demoMatch * 100).toFixed(0)}% (${e.demos} demos) ${(e.elapsedMs / 1000).toFixed(1)}s`;
    case "checkpoint":
      return `checkpoint step ${e.step} v${e.version}: ${e.path}`;
    case "log":
      return `${e.level}: ${e.message}`;
    case "episode-end":
    case "eval-failed": // its warning line says it
      return null;
    case "end":
      return `train: ${e.reason} at step ${e.step}`;
  }
}

/** Success first (the skill), then the shaped reward; a collapsed policy says so. */
export function formatEval(e: EvalEvent): string {
  const stage = e.stage === "init" ? " (before warm-start)" : "";
  const mode = e.mode === undefined ? "" : ` ${e.mode}${e.mode === "sampled" ? ` T=${e.temperature ?? 1}` : ""}`;
  const collapse = e.collapsed ? `  COLLAPSED: '${e.topAnswer}' for ${((e.topAnswerShare ?? 0) * 100).toFixed(0)}% of inputs` : "";
  const d = e.decisions;
  const decisions = d && d.total > 0 ? `  invalid ${((d.invalid / d.total) * 100).toFixed(0)}% fallback ${((d.fallbacks / d.total) * 100).toFixed(0)}%` : "";
  const roles = e.perRole && Object.keys(e.perRole).length > 0
    ? `  ${Object.entries(e.perRole).map(([r, m]) => `${r} win ${(m.success * 100).toFixed(0)}%`).join(" ")}`
    : "";
  return `eval step ${e.step}${stage}: ${e.env}/${e.split}${mode} success ${(e.success * 100).toFixed(1)}% (r=${e.meanReward.toFixed(3)} n=${e.episodes}${e.failed ? `, ${e.failed} failed` : ""})${roles}${decisions}${collapse}`;
}

function formatFill(s: FillStatus, width: number): string {
  const envs = Object.entries(s.perEnv)
    .map(([env, f]) => `${env} ${f.done}/${f.target}${f.meanReward === undefined ? "" : ` r=${f.meanReward.toFixed(2)} ok=${((f.success ?? 0) * 100).toFixed(0)}%`}`)
    .join("  ");
  const failText = formatFailures(s.failures, " ");
  const eta = s.etaS === null ? "" : ` eta ${Math.round(s.etaS)}s`;
  const line = `[${s.phase}] step ${s.step}/${s.steps} v${s.version} ${envs}${failText} ${s.episodesPerS.toFixed(1)} ep/s${eta}`;
  return line.length > width ? line.slice(0, Math.max(0, width - 1)) : line;
}

export function createProgress(mode: ProgressMode, steps: number, out: NodeJS.WriteStream = process.stdout): ProgressSink {
  let live = false;
  const clearLive = (): void => {
    if (live) out.write("\r\x1b[2K");
    live = false;
  };
  return {
    event(e) {
      if (mode === "json") {
        out.write(`${JSON.stringify(e)}\n`);
        return;
      }
      const text = formatEvent(e, steps);
      if (text === null) return;
      if (mode === "tty") clearLive();
      out.write(`${text}\n`);
    },
    fill(s) {
      if (mode !== "tty") return;
      out.write(`\r\x1b[2K${formatFill(s, out.columns || 100)}`);
      live = true;
    },
    close() {
      if (mode === "tty") clearLive();
    },
  };
}
