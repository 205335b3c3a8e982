import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { type EvalEvent, type RunEvent, RunEventSchema, type StepEvent, type WarmStartEvent } from "../train/events.ts";

/** What a run's metrics.jsonl says so far: the latest of each kind of event, never the whole list. */
export interface RunProgress {
  started: boolean;
  /** run.steps of the latest start (the step count it trains to). */
  targetSteps: number | null;
  step: number;
  lastStep: StepEvent | null;
  /** The latest evaluation of each (environment, mode). */
  latestEval: EvalEvent[];
  warmStart: WarmStartEvent | null;
  checkpoint: { step: number; path: string } | null;
  /** The latest start's end; null while that start runs (or died without one). */
  end: Extract<RunEvent, { type: "end" }> | null;
  /** The last warnings and errors the run logged. */
  problems: string[];
}

interface Cursor {
  offset: number;
  /** A line not yet ended by a newline (the run is writing it). */
  partial: string;
  /** Holds a character split between two reads. */
  decoder: StringDecoder;
  progress: RunProgress;
}

const cursors = new Map<string, Cursor>();
const CHUNK = 1 << 20;

function empty(): RunProgress {
  return { started: false, targetSteps: null, step: 0, lastStep: null, latestEval: [], warmStart: null, checkpoint: null, end: null, problems: [] };
}

function fold(p: RunProgress, e: RunEvent): void {
  switch (e.type) {
    case "start":
      p.started = true;
      p.targetSteps = e.steps;
      p.end = null;
      break;
    case "step":
      p.step = e.step;
      p.lastStep = e;
      break;
    case "eval": {
      const mode = e.mode ?? "sampled";
      p.latestEval = [...p.latestEval.filter((x) => !(x.env === e.env && (x.mode ?? "sampled") === mode)), e];
      break;
    }
    case "warm-start":
      p.warmStart = e;
      break;
    case "checkpoint":
      p.checkpoint = { step: e.step, path: e.path };
      break;
    case "end":
      p.end = e;
      p.step = Math.max(p.step, e.step);
      break;
    case "log":
      if (e.level !== "info") p.problems = [...p.problems.slice(-4), `${e.level}: ${e.message}`];
      break;
    case "episode-end":
    case "eval-failed": // its warning log line is among the problems
      break;
  }
}

/**
 * Reads what was appended to `<runDir>/metrics.jsonl` since the last call and folds it in: a poll costs
 * the new lines, not the file (which holds one line per episode).
 */
export function readRunProgress(runDir: string): RunProgress {
  const path = join(runDir, "metrics.jsonl");
  if (!existsSync(path)) {
    cursors.delete(path);
    return empty();
  }
  const size = statSync(path).size;
  let cur = cursors.get(path);
  if (!cur || size < cur.offset) cur = { offset: 0, partial: "", decoder: new StringDecoder("utf8"), progress: empty() };
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(CHUNK);
    while (cur.offset < size) {
      const n = readSync(fd, buf, 0, Math.min(CHUNK, size - cur.offset), cur.offset);
      if (n === 0) break;
      cur.offset += n;
      const lines = (cur.partial + cur.decoder.write(buf.subarray(0, n))).split("\n");
      cur.partial = lines.pop() ?? "";
      for (const line of lines) {
        if (line.trim() === "") continue;
        let json: unknown;
        try {
          json = JSON.parse(line);
        } catch {
          continue;
        }
        const parsed = RunEventSchema.safeParse(json);
        if (parsed.success) fold(cur.progress, parsed.data);
      }
    }
  } finally {
    closeSync(fd);
  }
  cursors.set(path, cur);
  return cur.progress;
}
