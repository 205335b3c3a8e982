import type { RunConfig } from "../../server/config/index.ts";
import type { RunResult } from "../run/run-loop.ts";
import { TrainingService } from "../run/service.ts";
import type { RunEvent } from "./events.ts";
import type { ProgressSink } from "./progress.ts";

export type { RunResult } from "../run/run-loop.ts";

export interface RunTrainingOptions {
  /** The validated run config; with `resume`, the one saved in the run directory. */
  config: RunConfig;
  runDir: string;
  /** Continue the run in `runDir` from its newest checkpoint. */
  resume?: boolean;
  /** Where environments are installed (`.agentjet/`, agentjet.lock) and relative `options.data` resolves. */
  projectDir: string;
  /** Overrides `server.port` (0 picks a free one). */
  port?: number;
  progress: ProgressSink;
  /** Aborting it stops the run cleanly (Ctrl-C). */
  signal?: AbortSignal;
  /** Every event, after it is written to metrics.jsonl. */
  onEvent?: (event: RunEvent) => void;
  /** Write report.html at the end (default true). */
  report?: boolean;
  /** Told the dashboard's address once the server listens (`agentjet train` prints it). */
  onDashboard?: (url: string) => void;
}

/**
 * `agentjet train`: the training service `agentjet serve` runs (hub/run/), started with the config, plus
 * local clients, progress output and the report. It writes the run directory (config.yaml, run.db,
 * metrics.jsonl, checkpoints/, report.html) and runs until every policy's weight version reaches
 * `run.steps`, or until `signal` aborts; either way it stops cleanly: in-flight episodes are aborted
 * (finished ones stay pooled in run.db), a final checkpoint is written, and `--resume` continues from it.
 */
export async function runTraining(o: RunTrainingOptions): Promise<RunResult> {
  const { config } = o;
  const service = await TrainingService.listen({
    host: config.server.host,
    port: o.port ?? config.server.port,
    projectDir: o.projectDir,
    runDir: o.runDir,
    config,
    // The run's own log events reach the progress sink; the service adds nothing to the output.
    log: () => undefined,
    run: {
      localClients: config.clients.local,
      ...(o.report !== undefined ? { report: o.report } : {}),
      ...(o.onEvent ? { onEvent: o.onEvent } : {}),
    },
  });
  o.onDashboard?.(service.dashboardUrl());
  try {
    await service.start({ resume: o.resume ?? false, progress: o.progress, ...(o.signal ? { signal: o.signal } : {}) });
    return await service.whenEnded()!;
  } finally {
    await service.close();
  }
}
