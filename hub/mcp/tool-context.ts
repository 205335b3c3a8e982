import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { NotRunningError } from "./errors.ts";
import type { ProcessKind, ProcessRecord, ProcessTable } from "./process-table.ts";

/** What every tool reads: the project its paths resolve against, and the children this server started. */
export interface ToolContext {
  projectDir: string;
  processes: ProcessTable;
}

/** A run (or campaign) directory from a tool's `run` argument: a process id from run_start, or a path (relative to the project). */
export function resolveDir(ctx: ToolContext, kind: ProcessKind, ref: string): string {
  return ctx.processes.find(kind, ref)?.dir ?? resolve(ctx.projectDir, ref);
}

/**
 * What run_status and sweep_status share: one argument, `key`, naming the process (as `ref` describes),
 * read-only, answering `status` of it. Spread into the tool's spec beside its name, title and description.
 */
export function statusToolParts<K extends string, O extends z.ZodObject>(key: K, ref: z.ZodString, result: O, status: (ref: string) => z.input<O>) {
  return {
    input: z.object({ [key]: ref } as Record<K, z.ZodString>),
    result,
    annotations: { readOnlyHint: true },
    run: async (a: Record<K, string>) => status(a[key]),
  };
}

/** A stop tool's input beside the process: whether to wait for the exit, and for how long. */
export const StopInput = { wait: z.boolean().default(true), timeoutS: z.number().min(0).max(600).default(45) };

/**
 * Sends a running process SIGINT (as Ctrl-C) and, with `wait`, waits up to `timeoutS` for it to exit; then
 * answers its status, `timedOut` when it waited and the process had not exited.
 */
export async function stopProcess<S extends { state: string }>(
  ctx: ToolContext,
  record: ProcessRecord,
  options: { wait: boolean; timeoutS: number },
  status: (id: string) => S,
): Promise<S & { timedOut: boolean }> {
  if (!ctx.processes.isAlive(record)) throw new NotRunningError(record.id, status(record.id).state);
  ctx.processes.signal(record, "SIGINT");
  const ended = options.wait ? await ctx.processes.waitExit(record, options.timeoutS * 1000) : false;
  return { ...status(record.id), timedOut: options.wait && !ended };
}

/** The last `bytes` bytes of a log file as text ("" when it is absent); a run's stdout holds every event, so never the whole. */
export function tailOf(path: string, bytes = 2000): string {
  if (!existsSync(path)) return "";
  const size = statSync(path).size;
  const n = Math.min(size, bytes);
  const buf = Buffer.alloc(n);
  const fd = openSync(path, "r");
  try {
    readSync(fd, buf, 0, n, size - n);
  } finally {
    closeSync(fd);
  }
  return buf.toString("utf8");
}

/**
 * The error a `--json` command printed on stdout, if it printed one: `{ ok: false, error: { code, message } }`
 * (train, report, env, config) or `{ event: "error", code, message }` (sweep).
 */
export function printedError(stdoutPath: string): { code: string; message: string } | null {
  const lines = tailOf(stdoutPath, 64_000).split("\n").reverse();
  for (const line of lines) {
    if (!line.startsWith('{"ok":false') && !line.startsWith('{"event":"error"')) continue;
    try {
      const json = JSON.parse(line) as { error?: { code?: unknown; message?: unknown }; code?: unknown; message?: unknown };
      const e = json.error ?? json;
      if (typeof e.code === "string") return { code: e.code, message: String(e.message ?? "") };
    } catch {
      continue;
    }
  }
  return null;
}
