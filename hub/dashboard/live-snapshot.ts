import type { EngineStatus } from "../run/engine-status.ts";
import type { FillStatus } from "../train/progress.ts";
import type { ClientView } from "./client-activity.ts";
import type { DashboardSource } from "./dashboard-source.ts";
import type { LogLine } from "./live-feed.ts";

/** What the dashboard's stream sends every tick: small, whatever the run's size. */
export interface LiveSnapshot {
  time: number;
  status: EngineStatus;
  /** The run's target step count (`run.steps`), when configured. */
  steps: number | null;
  /** Batch fill per environment, episodes per second and ETA (the terminal's status line). */
  fill: FillStatus | null;
  queue: { queued: number; inFlight: number; registered: number; claimed: number } | null;
  sandboxes: Array<{ env: string; live: number; idle: number; started: number; replaced: number }>;
  clients: ClientView[];
  logs: LogLine[];
  /** Moves when the charts change: fetch `/v1/dashboard/charts` again. */
  chartVersion: number;
  /** Moves when an episode is registered, claimed, ended, aborted or reclaimed: fetch the episode list again. */
  episodesVersion: number;
}

export function liveSnapshot(source: DashboardSource): LiveSnapshot {
  const run = source.run();
  const stats = run?.scheduler.stats();
  return {
    time: Date.now(),
    status: source.status(),
    steps: source.config()?.run.steps ?? null,
    fill: source.feed.fill(),
    queue: run && stats ? { queued: stats.queued, inFlight: stats.inFlight, registered: run.store.list({ state: "registered" }).length, claimed: run.store.inFlight().length } : null,
    sandboxes: run ? run.envs.map((e) => {
      const s = e.runtime.stats();
      return { env: e.name, live: s.live, idle: s.idle, started: s.started, replaced: s.replaced };
    }) : [],
    clients: source.clients(),
    logs: source.feed.logs().slice(-10),
    chartVersion: source.feed.chartVersion(),
    episodesVersion: source.feed.episodesVersion(),
  };
}
