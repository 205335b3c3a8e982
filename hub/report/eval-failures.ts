import type { RunEvent } from "../train/events.ts";

/** An evaluation that was due but did not finish: the step it was of and why. */
export interface EvalFailure {
  step: number;
  error: string;
  /** The error's stable code, when it had one (never for runs written before `eval-failed` events). */
  code?: string;
}

/** The warning line of a failed evaluation in runs written before `eval-failed` events. */
const LEGACY_LINE = /^evaluation at step (\d+) failed: ([\s\S]*)$/;

/**
 * The run's failed evaluations, in order: its `eval-failed` events. A session written before they existed
 * (its `start` has no `format`) said so only in a warning line, so for such sessions alone, as a fallback,
 * the line's words are read as the report read them before; in a newer session a line with the same words
 * (an error quoting a task's text) is only a line. Lines before any start belong to the first session.
 */
export function evalFailures(events: readonly RunEvent[]): EvalFailure[] {
  const first = events.find((e) => e.type === "start");
  let legacy = first?.type !== "start" || first.format === undefined;
  const out: EvalFailure[] = [];
  for (const e of events) {
    if (e.type === "start") legacy = e.format === undefined;
    else if (e.type === "eval-failed") out.push({ step: e.step, error: e.error, ...(e.code !== undefined ? { code: e.code } : {}) });
    else if (legacy && e.type === "log" && e.level === "warn") {
      const m = LEGACY_LINE.exec(e.message);
      if (m) out.push({ step: Number(m[1]), error: m[2]! });
    }
  }
  return out;
}
