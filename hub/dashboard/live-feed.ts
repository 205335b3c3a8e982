import type { EpisodeStore } from "../../server/episodes/index.ts";
import type { RunEvent } from "../train/events.ts";
import type { FillStatus, ProgressSink } from "../train/progress.ts";

/** A log line of the run, as the dashboard lists it. */
export interface LogLine {
  time: string;
  level: "info" | "warn" | "error";
  message: string;
}

/** Totals of the step events this process has seen (the `/metrics` step-time summary and token counters). */
export interface StepTotals {
  steps: number;
  durationMsSum: number;
  lastDurationMs: number | null;
  trainedTokens: Record<string, number>;
  callTokens: number;
  sampleTokens: number;
}

/**
 * The run's progress as the dashboard and `/metrics` see it: the latest batch fill (what the terminal's
 * status line shows), step totals, recent warnings and errors, a counter that moves whenever an event
 * changes a chart and one that moves whenever an episode changes state. The service tees every run's
 * progress sink into it and watches every run's episode store; it outlives runs.
 */
export class LiveFeed {
  #fill: FillStatus | null = null;
  #chartVersion = 0;
  #episodesVersion = 0;
  readonly #logs: LogLine[] = [];
  readonly #totals: StepTotals = { steps: 0, durationMsSum: 0, lastDurationMs: null, trainedTokens: {}, callTokens: 0, sampleTokens: 0 };
  readonly #maxLogs: number;

  constructor(maxLogs = 50) {
    this.#maxLogs = maxLogs;
  }

  /** A progress sink that feeds this and passes everything on to `inner`. */
  tee(inner: ProgressSink): ProgressSink {
    return {
      event: (e) => {
        this.event(e);
        inner.event(e);
      },
      fill: (s) => {
        this.#fill = s;
        inner.fill(s);
      },
      close: () => inner.close(),
    };
  }

  event(e: RunEvent): void {
    if (e.type === "step" || e.type === "eval" || e.type === "warm-start") this.#chartVersion += 1;
    if (e.type === "start") this.#fill = null;
    if (e.type === "step") {
      const t = this.#totals;
      t.steps += 1;
      t.durationMsSum += e.durationMs;
      t.lastDurationMs = e.durationMs;
      t.callTokens += e.merging.callTokens;
      t.sampleTokens += e.merging.sampleTokens;
      for (const [policy, m] of Object.entries(e.perPolicy)) t.trainedTokens[policy] = (t.trainedTokens[policy] ?? 0) + m.tokens;
    }
    if (e.type === "log" && e.level !== "info") {
      this.#logs.push({ time: e.time, level: e.level, message: e.message });
      if (this.#logs.length > this.#maxLogs) this.#logs.shift();
    }
  }

  /**
   * Counts `store`'s episode transitions (registered, claimed, ended, aborted, reclaimed) and the commits
   * of their rows to run.db until the returned function is called. Watching counts once too: a new run's
   * store is a change of its own.
   */
  watchEpisodes(store: Pick<EpisodeStore, "on">): () => void {
    const bump = (): void => void (this.#episodesVersion += 1);
    bump();
    // `persisted`: on a file, rows reach run.db (which the list reads) a little after their transition
    const offs = (["registered", "claimed", "ended", "aborted", "reclaimed", "persisted"] as const).map((event) => store.on(event, bump));
    return () => {
      for (const off of offs) off();
    };
  }

  fill(): FillStatus | null {
    return this.#fill;
  }

  /** Moves when a step, evaluation or warm-start event arrives: the charts are stale. */
  chartVersion(): number {
    return this.#chartVersion;
  }

  /** Moves when an episode of a watched store changes state: the episode list is stale. */
  episodesVersion(): number {
    return this.#episodesVersion;
  }

  logs(): LogLine[] {
    return [...this.#logs];
  }

  totals(): StepTotals {
    return { ...this.#totals, trainedTokens: { ...this.#totals.trainedTokens } };
  }
}
