import { readFileSync } from "node:fs";
import { type RunEvent, RunEventSchema } from "../train/events.ts";

/**
 * Reads a run's metrics.jsonl. A torn last line (the run was killed mid-write) is skipped, not fatal;
 * any other invalid line is reported by number.
 */
export function readMetrics(path: string): { events: RunEvent[]; skipped: number[] } {
  const lines = readFileSync(path, "utf8").split("\n");
  const events: RunEvent[] = [];
  const skipped: number[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      skipped.push(i + 1);
      return;
    }
    const parsed = RunEventSchema.safeParse(json);
    if (parsed.success) events.push(parsed.data);
    else skipped.push(i + 1);
  });
  return { events, skipped };
}
