import { rmSync } from "node:fs";
import { join } from "node:path";
import { formatConfigIssues, loadRunConfig, type RunConfig } from "../../server/config/index.ts";
import { readLatestCheckpoint } from "../train/checkpoint.ts";
import type { RunEvent } from "../train/events.ts";
import { type Campaign, type CampaignRun, writeCampaign } from "./campaign.ts";
import { finalMetrics, readRunEvents } from "./compare-runs.ts";
import { CampaignInUseError, InvalidRunConfigError, SweepFileNotFoundError } from "./errors.ts";
import type { SweepEventInput, SweepSummary } from "./events.ts";
import { installMissingEnvironments } from "./install-environments.ts";
import { type LaunchedRun, launchRun } from "./launch-run.ts";
import { isStillOurs, killAndWait } from "./processes.ts";
import { buildSweepReport } from "./sweep-report.ts";

export interface RunSweepOptions {
  /** The campaign directory (absolute). */
  dir: string;
  campaign: Campaign;
  /** Runs at a time. */
  parallel: number;
  /** The runs' working directory (the project: `.agentjet/`, relative data paths). */
  projectDir: string;
  /** A `--resume`: runs left running or interrupted continue first. */
  resumed: boolean;
  /** Start failed runs again (from their checkpoint, if any). Default: they stay failed. */
  retryFailed?: boolean;
  /** Aborting it stops cleanly: no run starts, running ones are asked to checkpoint and stop (SIGINT). */
  signal?: AbortSignal;
  /** Aborting it (after `signal`) stops the running ones at once. */
  force?: AbortSignal;
  emit: (e: SweepEventInput) => void;
  /** A run's own events, as it prints them (`--json`). */
  onRunEvent?: (id: string, e: RunEvent) => void;
  /** Write report.html and summary.json at the end (default true; never after an interrupt). */
  report?: boolean;
}

export interface SweepResult {
  reason: "done" | "failed" | "interrupted";
  /** The report's summary (null: not written). */
  summary: SweepSummary | null;
}

/** Whether a run directory holds a checkpoint `train --resume` can continue from. */
function hasCheckpoint(runDir: string): boolean {
  try {
    return readLatestCheckpoint(runDir).kind === "ok";
  } catch {
    return false;
  }
}

/** A run to start on this start of the sweep: not done, and not failed unless retried. */
function wanted(r: CampaignRun, retryFailed: boolean): boolean {
  return r.status === "pending" || r.status === "running" || r.status === "interrupted" || (r.status === "failed" && retryFailed);
}

/**
 * Runs a campaign's runs that are not done, `parallel` at a time, each a child `agentjet train`,
 * recording every change in campaign.json; a run that fails is recorded and the others go on. Runs
 * with a checkpoint continue from it (`train --resume`), the others start from an emptied run
 * directory. At the end it writes the comparison report.
 */
export async function runSweep(o: RunSweepOptions): Promise<SweepResult> {
  const { dir, campaign } = o;
  if (campaign.ownerPid !== null && isStillOurs(campaign.ownerPid, ["agentjet", "sweep"])) throw new CampaignInUseError(dir, campaign.ownerPid);
  const save = (): void => writeCampaign(dir, campaign);
  const runDirOf = (r: CampaignRun): string => join(dir, r.runDir);

  // A sweep killed outright leaves its runs' processes behind, until they write to their closed pipe.
  for (const r of campaign.runs) {
    if (r.pid === undefined) continue;
    if (isStillOurs(r.pid, ["train", runDirOf(r)])) {
      o.emit({ event: "log", message: `run ${r.id}: stopping its process ${r.pid}, left behind by the sweep's previous start` });
      await killAndWait(r.pid);
    }
    delete r.pid;
  }
  campaign.ownerPid = process.pid;
  save();

  const queue = campaign.runs.filter((r) => wanted(r, o.retryFailed ?? false));
  // Finish what was started before starting anything new.
  queue.sort((a, b) => Number(a.status === "pending") - Number(b.status === "pending"));
  const configs: RunConfig[] = [];
  for (const r of queue) {
    const loaded = await loadRunConfig(join(dir, r.config));
    if (loaded.kind === "unreadable") throw new SweepFileNotFoundError(join(dir, r.config), loaded.message);
    if (loaded.kind === "invalid") throw new InvalidRunConfigError(r.id, formatConfigIssues(loaded));
    configs.push(loaded.config);
  }
  await installMissingEnvironments(configs, o.projectDir, (message) => o.emit({ event: "log", message }));

  o.emit({ event: "sweep-start", name: campaign.name, campaignDir: dir, runs: campaign.runs.length, toRun: queue.length, parallel: o.parallel, resumed: o.resumed });
  const active = new Map<string, { handle: LaunchedRun; done: Promise<void> }>();
  const stopping = (): boolean => o.signal?.aborted ?? false;
  const interruptAll = (): void => {
    for (const { handle } of active.values()) handle.interrupt();
  };
  o.signal?.addEventListener("abort", interruptAll);
  o.force?.addEventListener("abort", interruptAll);

  const start = (r: CampaignRun): void => {
    const runDir = runDirOf(r);
    const resume = hasCheckpoint(runDir);
    if (!resume) rmSync(runDir, { recursive: true, force: true });
    const handle = launchRun({
      mode: resume ? { kind: "resume" } : { kind: "fresh", config: join(dir, r.config) },
      runDir,
      logFile: join(dir, "logs", `${r.id}.log`),
      projectDir: o.projectDir,
      ...(o.onRunEvent ? { onEvent: (e: RunEvent) => o.onRunEvent!(r.id, e) } : {}),
    });
    const began = Date.now();
    Object.assign(r, { status: "running", exitCode: null, starts: r.starts + 1, startedAt: new Date(began).toISOString() });
    if (handle.pid > 0) r.pid = handle.pid;
    delete r.endedAt;
    save();
    o.emit({ event: "run-start", id: r.id, params: r.params, seed: r.seed, runDir, mode: resume ? "resume" : "fresh", pid: handle.pid });
    const done = handle.ended.then((outcome) => {
      active.delete(r.id);
      r.status = outcome.kind;
      r.exitCode = outcome.exitCode;
      r.endedAt = new Date().toISOString();
      delete r.pid;
      save();
      const events = readRunEvents(runDir);
      o.emit({
        event: "run-end",
        id: r.id,
        status: r.status,
        exitCode: r.exitCode,
        durationMs: Date.now() - began,
        final: events.length > 0 ? finalMetrics(events) : null,
        ...(outcome.kind === "failed" ? { error: outcome.error } : {}),
      });
    });
    active.set(r.id, { handle, done });
  };

  try {
    for (;;) {
      while (!stopping() && active.size < o.parallel && queue.length > 0) start(queue.shift()!);
      if (active.size === 0) break;
      await Promise.race([...active.values()].map((a) => a.done));
    }
  } catch (err) {
    interruptAll();
    await Promise.allSettled([...active.values()].map((a) => a.done));
    throw err;
  } finally {
    o.signal?.removeEventListener("abort", interruptAll);
    o.force?.removeEventListener("abort", interruptAll);
    campaign.ownerPid = null;
    save();
  }
  const reason = stopping() ? "interrupted" : campaign.runs.some((r) => r.status === "failed") ? "failed" : "done";
  const summary = reason === "interrupted" || o.report === false ? null : await buildSweepReport(dir, campaign);
  return { reason, summary };
}
